// The one table of workloads: names that enter and leave at file and database boundaries, and
// the traits the rest of ditbench asks instead of comparing names.
#include "experiments/workload.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace ditbench::workload_test {
namespace {

constexpr Workload kEveryWorkload[] = {Workload::kDit, Workload::kCommand};

TEST(WorkloadTest, EveryWorkloadHasItsOwnRowAndItsNameReadsBack) {
  std::set<std::string_view> names;
  for (Workload w : kEveryWorkload) {
    EXPECT_EQ(TraitsOf(w).workload, w);
    EXPECT_TRUE(names.insert(WorkloadName(w)).second) << WorkloadName(w);
    EXPECT_EQ(ParseWorkload(WorkloadName(w)), w);
    EXPECT_FALSE(TraitsOf(w).summary.empty());
  }
}

// The names are stored in trial keys and databases: renaming one changes every key.
TEST(WorkloadTest, StoredNamesAreFrozen) {
  EXPECT_EQ(WorkloadName(Workload::kDit), "dit");
  EXPECT_EQ(WorkloadName(Workload::kCommand), "command");
  EXPECT_EQ(WorkloadName(Workload::kEngine), "engine");
}

TEST(WorkloadTest, AnUnknownNameParsesToNothing) {
  EXPECT_EQ(ParseWorkload("shell"), std::nullopt);
  EXPECT_EQ(ParseWorkload("DIT"), std::nullopt);
  EXPECT_EQ(ParseWorkload(""), std::nullopt);
  EXPECT_EQ(ParseWorkload("command "), std::nullopt);
}

TEST(WorkloadTest, DiagnosticsListEveryName) {
  EXPECT_EQ(WorkloadNameList(), "'dit', 'command' or 'engine'");
  EXPECT_EQ(WorkloadChoices(),
            "'dit' (the built-in DiT worker), 'command' (your own program, see 'command') or "
            "'engine' (an inference server over HTTP, see 'engine')");
}

TEST(WorkloadTest, TheBuiltInWorkerRunsItsOwnModel) {
  const WorkloadTraits& dit = TraitsOf(Workload::kDit);
  EXPECT_EQ(dit.launch, WorkloadLaunch::kWorker);
  EXPECT_TRUE(dit.builtin_model);
  EXPECT_FALSE(dit.log_tail_in_errors);
}

TEST(WorkloadTest, ACommandRunsTheSweepsProgramAndItsModelIsALabel) {
  const WorkloadTraits& command = TraitsOf(Workload::kCommand);
  EXPECT_EQ(command.launch, WorkloadLaunch::kProgram);
  EXPECT_FALSE(command.builtin_model);
  EXPECT_TRUE(command.log_tail_in_errors);
}

}  // namespace
}  // namespace ditbench::workload_test
