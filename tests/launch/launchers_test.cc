#include "launch/launchers.h"

#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "base/user_error.h"
#include "launch/local_launcher.h"
#include "launch/slurm/slurm_launcher.h"
#include "launch/slurm/slurm_step_launcher.h"

namespace ditbench::launchers_test {
namespace {

TEST(LaunchersTest, EveryKindHasOneRowWhoseNameParsesBackToIt) {
  std::set<LauncherKind> kinds;
  for (const LauncherChoice& choice : kLaunchers) {
    EXPECT_TRUE(kinds.insert(choice.value).second) << choice.name;
    EXPECT_EQ(ParseChoice(kLaunchers, choice.name, "--launcher"), choice.value);
    EXPECT_NE(choice.make, nullptr) << choice.name;
  }
  // What campaigns recorded before the table: `compare` reproduces runs by these names.
  EXPECT_EQ(ChoiceName(kLaunchers, LauncherKind::kLocal), "local");
  EXPECT_EQ(ChoiceName(kLaunchers, LauncherKind::kSlurm), "slurm");
}

const LauncherChoice& Row(LauncherKind kind) {
  for (const LauncherChoice& choice : kLaunchers)
    if (choice.value == kind) return choice;
  throw std::logic_error("no row");
}

TEST(LaunchersTest, LocalStartsProcessesHereWithTheMachinesGpusHealthAndCores) {
  LauncherSettings settings;
  settings.gpus = "cpu:2";
  settings.dry_run = true;
  const LaunchSetup setup = Row(LauncherKind::kLocal).make(settings);
  EXPECT_NE(dynamic_cast<LocalLauncher*>(setup.launcher.get()), nullptr);
  EXPECT_NE(setup.gpus, nullptr);
  EXPECT_NE(setup.health, nullptr);
  EXPECT_NE(setup.cpus, nullptr);
  EXPECT_EQ(setup.gpus_option, "cpu:2");
}

TEST(LaunchersTest, SlurmWithCpuRanksIsAJobOrAStepPerTrialAsTheModeSays) {
  LauncherSettings settings;
  settings.gpus = "cpu:2";
  const LaunchSetup job = Row(LauncherKind::kSlurm).make(settings);
  EXPECT_NE(dynamic_cast<SlurmLauncher*>(job.launcher.get()), nullptr);
  EXPECT_NE(job.resources, nullptr);  // the Slurm client it borrows
  EXPECT_EQ(job.health, nullptr);     // the ranks run elsewhere: this machine's health says nothing
  EXPECT_EQ(job.cpus, nullptr);
  EXPECT_EQ(job.gpus_option, "cpu:2");
  settings.slurm.mode = SlurmMode::kStep;
  const LaunchSetup step = Row(LauncherKind::kSlurm).make(settings);
  EXPECT_NE(dynamic_cast<SlurmStepLauncher*>(step.launcher.get()), nullptr);
}

TEST(LaunchersTest, SlurmRefusesABadNodeCountAsTheUsersMistake) {
  LauncherSettings settings;
  settings.gpus = "cpu:2";
  for (const char* bad : {"0", "two", "2x", ""}) {
    settings.slurm.nodes_per_trial = bad;
    try {
      Row(LauncherKind::kSlurm).make(settings);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--nodes-per-trial '") + bad + "': expected auto or a node count >= 1");
    }
  }
}

TEST(SlurmModesTest, NamesAreJobAndStep) {
  EXPECT_EQ(ParseChoice(kSlurmModes, "job", "--slurm-mode"), SlurmMode::kJob);
  EXPECT_EQ(ParseChoice(kSlurmModes, "step", "--slurm-mode"), SlurmMode::kStep);
  EXPECT_THROW(ParseChoice(kSlurmModes, "array", "--slurm-mode"), UserError);
}

}  // namespace
}  // namespace ditbench::launchers_test
