// How long the coordinator takes to expand and validate a large sweep, before any GPU work:
// parse the YAML, expand a 100,000-trial matrix, judge every trial against the model and the
// machine, and compute every trial key. Prints one line per phase and the total; run it with
// `build/bench/expand_bench [trials]` (default 100000). Target: the whole path under 1 s.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/validity.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A matrix of seeds x resolutions x degrees with `trials` points (a multiple of 1000).
std::string SweepText(int trials) {
  std::string yaml =
      "name: bench\ndefaults: {model: pixart-alpha, steps: 20}\nmatrix:\n"
      "  resolution: [512, 1024, 2048, 4096, 768]\n"
      "  ulysses: [1, 2, 4, 8]\n"
      "  precision: [bf16, fp16]\n"
      "  cfg: [1, 2]\n"
      "  ring: [1, 2]\n"
      "  dp: [1, 2]\n"
      "  pipefusion: [1, 2, 4]\n"
      "  steps: [";
  // 5 * 4 * 2 * 2 * 2 * 2 * 3 = 960 points per steps value
  const int steps_values = (trials + 959) / 960;
  for (int i = 0; i < steps_values; ++i) yaml += std::to_string(i + 1) + (i + 1 < steps_values ? ", " : "]\n");
  yaml += "where:\n  - \"world_size <= 64\"\n";
  return yaml;
}

}  // namespace

int main(int argc, char** argv) {
  const int wanted = argc > 1 ? std::atoi(argv[1]) : 100000;
  const std::string text = SweepText(wanted);

  auto start = Clock::now();
  auto t = Clock::now();
  ditbench::ParseResult parsed = ditbench::ParseSweep(text, "bench.yaml");
  const double parse_s = Seconds(t);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.errors[0].ToString().c_str());
    return 1;
  }
  t = Clock::now();
  auto expanded = ditbench::ExpandSweep(parsed.spec, 64);
  const double expand_s = Seconds(t);
  t = Clock::now();
  std::size_t runnable = 0;
  for (const auto& trial : expanded.trials)
    if (!ditbench::Judge(trial, {64, true}).invalid) ++runnable;
  const double judge_s = Seconds(t);
  t = Clock::now();
  std::size_t key_bytes = 0;
  for (const auto& trial : expanded.trials) key_bytes += ditbench::TrialKey(trial).size();
  const double key_s = Seconds(t);
  const double total_s = Seconds(start);

  std::printf("matrix points        %zu\n", ditbench::UnfilteredTrialCount(parsed.spec));
  std::printf("trials after where   %zu (%zu removed; %zu valid by the rules)\n",
              expanded.trials.size(), expanded.failed_where[0], runnable);
  std::printf("parse                %8.4f s\n", parse_s);
  std::printf("expand + where       %8.4f s\n", expand_s);
  std::printf("validity             %8.4f s\n", judge_s);
  std::printf("trial keys (sha256)  %8.4f s  (%zu bytes)\n", key_s, key_bytes);
  std::printf("total                %8.4f s  (%.2f us per matrix point)\n", total_s,
              total_s * 1e6 / double(ditbench::UnfilteredTrialCount(parsed.spec)));
  return 0;
}
