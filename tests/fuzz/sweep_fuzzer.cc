// libFuzzer target over parse -> expand -> validate -> plan, the path every sweep file takes.
// Built only with -DDITBENCH_FUZZ=ON and clang (see docs/sweep-spec.md, "Fuzzing"). Any crash,
// sanitizer report, uncaught exception, or a diagnostic that is not one located line fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/validity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ditbench::ParseResult parsed = ditbench::ParseSweep(text, "fuzz.yaml");
  for (const auto& e : parsed.errors) {
    const std::string line = e.ToString();
    if (line.find('\n') != std::string::npos || e.line < 1 || e.column < 1) std::abort();
  }
  if (!parsed.ok()) return 0;
  // Keep each input cheap: the expansion limit is tested elsewhere.
  if (ditbench::UnfilteredTrialCount(parsed.spec) > 20000) return 0;
  auto expanded = ditbench::ExpandSweep(parsed.spec, 8);
  for (const auto& trial : expanded.trials) {
    (void)ditbench::Judge(trial, {8, true});
    (void)ditbench::TrialKey(trial);
  }
  return 0;
}
