#include "experiments/workload.h"

#include <array>

#include <fmt/format.h>

namespace ditbench {
namespace {

// The one list of workloads. Names are stored in trial keys and databases: never rename one.
constexpr std::array<WorkloadTraits, 3> kWorkloads{{
    {.workload = Workload::kDit,
     .name = "dit",
     .summary = "the built-in DiT worker",
     .launch = WorkloadLaunch::kWorker,
     .builtin_model = true,
     .log_tail_in_errors = false},
    {.workload = Workload::kCommand,
     .name = "command",
     .summary = "your own program, see 'command'",
     .launch = WorkloadLaunch::kProgram,
     .builtin_model = false,
     .log_tail_in_errors = true},
    {.workload = Workload::kEngine,
     .name = "engine",
     .summary = "an inference server over HTTP, see 'engine'",
     .launch = WorkloadLaunch::kEngine,
     .builtin_model = false,
     .log_tail_in_errors = true},
}};

template <typename Describe>
std::string JoinChoices(const Describe& describe) {
  std::string out;
  for (std::size_t i = 0; i < kWorkloads.size(); ++i) {
    if (i > 0) out += i + 1 == kWorkloads.size() ? " or " : ", ";
    out += describe(kWorkloads[i]);
  }
  return out;
}

}  // namespace

const WorkloadTraits& TraitsOf(Workload workload) {
  for (const WorkloadTraits& traits : kWorkloads)
    if (traits.workload == workload) return traits;
  return kWorkloads.front();  // unreachable: every enum value has a row (workload_test)
}

int LaunchedRanks(Workload workload, int world_size) {
  return TraitsOf(workload).launch == WorkloadLaunch::kEngine ? 1 : world_size;
}

std::string_view WorkloadName(Workload workload) { return TraitsOf(workload).name; }

std::optional<Workload> ParseWorkload(std::string_view name) {
  for (const WorkloadTraits& traits : kWorkloads)
    if (traits.name == name) return traits.workload;
  return std::nullopt;
}

std::string WorkloadNameList() {
  return JoinChoices([](const WorkloadTraits& t) { return fmt::format("'{}'", t.name); });
}

std::string WorkloadChoices() {
  return JoinChoices(
      [](const WorkloadTraits& t) { return fmt::format("'{}' ({})", t.name, t.summary); });
}

}  // namespace ditbench
