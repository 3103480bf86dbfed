#include "runner/sweep_run.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <unistd.h>

#include "base/exit_codes.h"
#include "contract/worker_contract.h"
#include "experiments/trial_requests.h"
#include "machine/host_info.h"
#include "runner/coordinator_lock.h"
#include "storage/results_db.h"
#include "storage/statement.h"
#include "tests/support/recording_run_status.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/sweep_run_fixture.h"
#include "tests/support/temp_dir.h"

namespace ditbench::sweep_run_test {
namespace {

using test::SweepRunTest;


constexpr const char* kSweep = R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256]
  ulysses: [1, 2, 3, 4]
)";

TEST_F(SweepRunTest, InvalidTrialsAreStoredAsSkippedWithTheirReason) {
  EXPECT_EQ(Run(Options(kSweep)), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);  // ulysses 3 (heads) and 4 (slots) never launch
  auto statuses = Column("SELECT status FROM results ORDER BY ulysses");
  EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "ok", "skipped", "skipped"}));
  auto errors = Column("SELECT error FROM results WHERE status = 'skipped' ORDER BY ulysses");
  EXPECT_NE(errors[0].find("heads are not divisible by ulysses=3"), std::string::npos);
  EXPECT_NE(errors[1].find("exceeds the 2 CPU slots"), std::string::npos);
}

TEST_F(SweepRunTest, EveryEventGoesToTheRunStatusAndNoneToTheConsole) {
  test::RecordingRunStatus status;
  ASSERT_EQ(RunSweep(Options(kSweep), SweepEffects{launcher_, interrupt_, gpus_}, status, out_,
                     err_),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(), "");
  // Each event without its label's key and axes: "<event> [i/n]".
  std::vector<std::string> events;
  for (const std::string& e : status.events) {
    const auto label = e.find(" [");
    events.push_back(label == std::string::npos ? e : e.substr(0, e.find(']', label) + 1));
  }
  EXPECT_EQ(events, (std::vector<std::string>{
                        "campaign 1 s trials=4 selected=0 slots=2 replicates=1",
                        "started [1/4]", "ok [1/4]", "progress", "started [2/4]",
                        "skipped [3/4]", "skipped [4/4]", "ok [2/4]", "progress",
                        "ended ran=2 ok=2 skipped=2 predicted_oom=0 kept=0 failed=0 "
                        "not_started=0"}));
}

TEST_F(SweepRunTest, ProgressLineCountsTrialsDoneAndLeft) {
  EXPECT_EQ(Run(Options(kSweep)), 0) << err_.str();
  const std::string text = out_.str();
  EXPECT_NE(text.find("progress: 1/4 done, 3 left, "), std::string::npos) << text;
  EXPECT_NE(text.find(" to go"), std::string::npos) << text;
  EXPECT_NE(text.find("progress: 4/4 done, 0 left, "), std::string::npos) << text;
}

TEST_F(SweepRunTest, FailingTrialIsRecordedAndTheSweepGoesOn) {
  launcher_.fail_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
  EXPECT_NE(Column("SELECT error FROM results WHERE ulysses = 1")[0].find("injected failure"),
            std::string::npos);
  const std::string log = (dir_ / "results.runs" / "1").string();
  EXPECT_NE(out_.str().find("injected failure  (see " + log), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("/rank0.log)\n"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, SecondRunStartsNoTrial) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 0u);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "4");
}

TEST_F(SweepRunTest, RerunFailedRetriesOnlyFailures) {
  launcher_.fail_ulysses = 1;
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 1);
  launcher_.fail_ulysses = -1;
  launcher_.started.clear();
  out_.str("");
  EXPECT_EQ(Run(o), 1);  // still failed: not retried without --rerun
  EXPECT_EQ(launcher_.started.size(), 0u);
  // The kept failure is one of the already recorded trials, counted once.
  EXPECT_NE(out_.str().find("done: 0 ran (0 ok, 0 failed), 0 skipped as invalid, 4 already "
                            "recorded (1 of them failed earlier"),
            std::string::npos)
      << out_.str();
  o.rerun = Rerun::kFailed;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 1u);
}

constexpr const char* kSixTrials = R"(name: six
defaults: {model: pixart-alpha-tiny, warmup: 1, repeats: 3}
matrix:
  resolution: [256]
  ulysses: [1, 2]
  steps: [1, 2, 3]
)";

TEST_F(SweepRunTest, IdenticalFirstFailuresWarnLoudlyAndTheSweepGoesOn) {
  launcher_.fail_all = true;
  test::RecordingRunStatus status;
  EXPECT_EQ(RunSweep(Options(kSixTrials), SweepEffects{launcher_, interrupt_, gpus_}, status,
                     out_, err_),
            1);
  EXPECT_EQ(launcher_.started.size(), 6u);  // off by default: an overnight sweep goes on
  EXPECT_EQ(std::count_if(status.events.begin(), status.events.end(),
                          [](const std::string& e) {
                            return e.starts_with("identical-failures 3 warn failed: ");
                          }),
            1);
  // The console says it in capitals, with what failed.
  ConsoleRunStatus console(out_);
  console.IdenticalFailures(3, "failed: ModuleNotFoundError: No module named 'x'", false);
  EXPECT_NE(out_.str().find("WARNING: the first 3 launches all failed the same way (failed: "
                            "ModuleNotFoundError: No module named 'x')"),
            std::string::npos);
}

TEST_F(SweepRunTest, StopAfterFailuresStopsWhenTheFirstLaunchesAllFailTheSameWay) {
  launcher_.fail_all = true;
  auto o = Options(kSixTrials);
  o.stop_after_failures = 2;
  EXPECT_EQ(Run(o), 1);
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_NE(out_.str().find("STOPPING: the first 2 launches all failed the same way (failed: "),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("stopped: 2 ran (0 ok, 2 failed)"), std::string::npos) << out_.str();
  // A sweep whose failures differ, or that has an ok trial among the first, is not stopped.
  launcher_.fail_all = false;
  launcher_.fail_ulysses = 2;
  launcher_.started.clear();
  o.fresh = true;
  EXPECT_EQ(Run(o), 1);
  EXPECT_EQ(launcher_.started.size(), 6u);
}

TEST_F(SweepRunTest, TrialLeftRunningByADeadCoordinatorRunsAgain) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  {
    SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    ASSERT_EQ(sqlite3_exec(db.get(),
                           "UPDATE trials SET status = 'running' WHERE trial_key IN "
                           "(SELECT trial_key FROM results WHERE ulysses = 2)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  // It died before its ranks ended: no outcome in its folder (runner/unrecorded_launch.h).
  ASSERT_TRUE(std::filesystem::remove(
      std::filesystem::path(Column("SELECT run_dir FROM results WHERE ulysses = 2")[0]) /
      "ditbench-outcome.json"));
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 1u);
  EXPECT_NE(out_.str().find("marked interrupted"), std::string::npos) << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "2");
}

TEST_F(SweepRunTest, NewCampaignRunsEverythingAgain) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.started.clear();
  o.fresh = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "2");
}

TEST_F(SweepRunTest, DryRunPrintsThePlanAndRunsNothing) {
  auto o = Options(kSweep);
  o.dry_run = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(o.db));
  EXPECT_NE(out_.str().find("invalid: 4 heads are not divisible by ulysses=3"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("4 trials, 2 to run"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, SpecErrorExitsTwoWithLocation) {
  EXPECT_EQ(Run(Options("name: s\nmatrix:\n  ulyses: [1]\n")), 2);
  EXPECT_NE(err_.str().find("sweep.yaml:3:3:"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("did you mean 'ulysses'"), std::string::npos) << err_.str();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.db"));
}

TEST_F(SweepRunTest, BadGpusOptionIsAUsageError) {
  auto o = Options(kSweep);
  o.gpus = "cpu:x";
  EXPECT_EQ(Run(o), 2);
  EXPECT_NE(err_.str().find("--gpus"), std::string::npos);
}

// Four 1-rank trials (seeds 0..3) and one 2-rank trial.
constexpr const char* kSmallTrials = R"(name: s
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  seed: [0, 1, 2, 3]
include:
  - {ulysses: 2}
)";

TEST_F(SweepRunTest, ExclusivePolicyRunsOneTrialAtATime) {
  gpus_.gpus.assign(4, GpuInfo{"Fake GPU", ""});
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 5u);
  EXPECT_EQ(launcher_.max_in_flight, 1);
  // Each trial takes the first GPUs, since it has the machine to itself.
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"0"}));
  EXPECT_EQ(launcher_.started[4].devices, (std::vector<std::string>{"0", "1"}));
}

TEST_F(SweepRunTest, PackPolicyRunsTrialsSideBySideOnDisjointGpus) {
  gpus_.gpus.assign(2, GpuInfo{"Fake GPU", ""});
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = PlacementPolicy::kPack;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 5u);
  EXPECT_EQ(launcher_.max_in_flight, 2);
  EXPECT_FALSE(launcher_.overlapping_devices);
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"0"}));
  EXPECT_EQ(launcher_.started[1].devices, (std::vector<std::string>{"1"}));
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "5");
}

TEST_F(SweepRunTest, AnotherProgramOnATrialsGpuFlagsThatTrialOnly) {
  gpus_.gpus = {GpuInfo{"Fake GPU", "GPU-aaaa"}, GpuInfo{"Fake GPU", "GPU-bbbb"}};
  test::FakeHealthProbe probe;
  probe.gpu_others = {GpuProcess{"GPU-bbbb", 777, "python3", 20480}};
  health_ = &probe;
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = PlacementPolicy::kPack;
  EXPECT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 5u);
  for (const auto& started : launcher_.started) {
    const bool on_b = std::find(started.devices.begin(), started.devices.end(), "1") !=
                      started.devices.end();
    EXPECT_EQ(Column("SELECT busy || ' ' || COALESCE(health_note, '-') FROM results WHERE "
                     "trial_key = '" + started.trial_key + "'")[0],
              on_b ? "1 load 0.10 on 2 cores; others used 0.00 cores; on GPU-bbbb: python3 "
                     "(pid 777) 20480 MiB"
                   : "0 -")
        << started.trial_key;
  }
  EXPECT_NE(out_.str().find("[machine busy: load 0.10 on 2 cores; others used 0.00 cores; on "
                            "GPU-bbbb: python3 (pid 777) 20480 MiB]"),
            std::string::npos)
      << out_.str();
}

TEST_F(SweepRunTest, PackedCpuTrialsRecordDisjointSlotsAndWhoRanBesideThem) {
  auto o = Options(kSmallTrials);
  o.gpus = "cpu:4";
  o.policy = PlacementPolicy::kPack;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.max_in_flight, 4);  // four 1-rank trials at once, never more slots
  // The four 1-rank trials ran side by side on slots 0..3, each beside the three others.
  EXPECT_EQ(Column("SELECT json_extract(placement, '$.slots[0]') || ':' || concurrent_trials "
                   "FROM results WHERE world_size = 1 ORDER BY json_extract(placement, "
                   "'$.slots[0]')"),
            (std::vector<std::string>{"0:3", "1:3", "2:4", "3:4"}));
  // The 2-rank trial took two distinct slots freed by the first two trials.
  EXPECT_EQ(Column("SELECT json_array_length(placement, '$.slots') || ' ' || "
                   "(json_extract(placement, '$.slots[0]') != json_extract(placement, "
                   "'$.slots[1]')) FROM results WHERE world_size = 2"),
            (std::vector<std::string>{"2 1"}));
  // Exclusive: nobody beside anybody.
  o.policy = PlacementPolicy::kExclusive;
  o.fresh = true;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(Column("SELECT DISTINCT concurrent_trials FROM results WHERE campaign = 2"),
            (std::vector<std::string>{"0"}));
}

TEST_F(SweepRunTest, TrialsGetTheInheritedGpusNotTheFirstOnes) {
  gpus_.gpus.assign(8, GpuInfo{"Fake GPU", ""});
  gpus_.inherited = "4,GPU-5e1f";
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = PlacementPolicy::kPack;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"4"}));
  EXPECT_EQ(launcher_.started[1].devices, (std::vector<std::string>{"GPU-5e1f"}));
  EXPECT_EQ(launcher_.started[4].devices, (std::vector<std::string>{"4", "GPU-5e1f"}));
  EXPECT_NE(out_.str().find("5 trials on 2 GPU(s)"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, CtrlCKillsTheTrialInFlightAndExits130) {
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 2;  // Ctrl-C while the second trial runs
  auto o = Options(kSmallTrials);
  EXPECT_EQ(Run(o), 130);
  EXPECT_EQ(launcher_.started.size(), 2u);  // nothing new starts after Ctrl-C
  EXPECT_EQ(launcher_.cancels, 1);
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY status"),
            (std::vector<std::string>{"interrupted", "ok"}));
  EXPECT_EQ(Column("SELECT error FROM results WHERE status = 'interrupted'")[0],
            "interrupted by the user");
  EXPECT_NE(out_.str().find("run the same command again to resume"), std::string::npos);

  // The next run resumes: the interrupted trial and the rest run, the ok one does not.
  interrupt_.requested = false;
  launcher_.interrupt = nullptr;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 4u);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "5");
}

TEST_F(SweepRunTest, CtrlCWithSeveralInFlightCancelsEveryOne) {
  gpus_.gpus.assign(2, GpuInfo{"Fake GPU", ""});
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 2;
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = PlacementPolicy::kPack;
  EXPECT_EQ(Run(o), 130);
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(launcher_.cancels, 2);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'interrupted'")[0], "2");
}

TEST_F(SweepRunTest, InterruptBeforeTheFirstTrialStartsNothing) {
  interrupt_.requested = true;
  EXPECT_EQ(Run(Options(kSmallTrials)), 130);
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "0");
}

TEST_F(SweepRunTest, LaunchErrorIsAFailedTrialAndTheSweepGoesOn) {
  launcher_.launch_error_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT error FROM results WHERE ulysses = 1")[0],
            "cannot start worker: injected launch error");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
}

TEST_F(SweepRunTest, LauncherThatThrowsFailsOnlyThatTrial) {
  launcher_.throw_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT error FROM results WHERE ulysses = 1")[0],
            "cannot start the trial: no free port (injected)");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
}

TEST_F(SweepRunTest, UnusableRunFolderIsAUsageErrorBeforeAnyTrial) {
  auto o = Options(kSweep);
  o.run_root = dir_ / "runs";
  std::ofstream(dir_ / "runs") << "a file where the run folders should go";
  EXPECT_EQ(Run(o), 2);
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_NE(err_.str().find("cannot use run folder '" + (dir_ / "runs").string()),
            std::string::npos)
      << err_.str();
  EXPECT_FALSE(std::filesystem::exists(o.db));
}

TEST_F(SweepRunTest, TrialFolderThatCannotBePreparedIsAFailedTrialAndTheSweepGoesOn) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);  // campaign 1 and its run folder exist
  std::filesystem::remove_all(dir_ / "results.runs" / "2");
  std::ofstream(dir_ / "results.runs" / "2") << "a file where campaign 2's folders should go";
  o.fresh = true;
  EXPECT_EQ(Run(o), 1);
  auto errors = Column("SELECT error FROM results WHERE status = 'failed'");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("cannot prepare"), std::string::npos) << errors[0];
}

TEST_F(SweepRunTest, SecondCoordinatorOnTheDatabaseExitsThreeAndChangesNothing) {
  auto o = Options(kSweep);
  LockHolder unused;
  auto held = CoordinatorLock::TryAcquire(o.db, &unused);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(Run(o), kExitStorageFailed);
  EXPECT_NE(err_.str().find("in use by another `ditbench run` (pid " +
                            std::to_string(getpid()) + " on "),
            std::string::npos)
      << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(std::filesystem::file_size(o.db), 0u);  // as the holder left it
  held.reset();
  EXPECT_EQ(Run(o), 0) << err_.str();  // the lock went with its holder
}

// Each alias used to get its own `<alias>.lock`: a second coordinator through a symlink ran
// trials beside the first, which then overwrote them.
TEST_F(SweepRunTest, SecondCoordinatorThroughASymlinkedDatabaseExitsThree) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0) << err_.str();
  LockHolder unused;
  auto held = CoordinatorLock::TryAcquire(o.db, &unused);
  ASSERT_TRUE(held.has_value());
  auto alias = o;
  std::filesystem::create_directory(dir_ / "other");
  alias.db = dir_ / "other" / "alias.db";
  std::filesystem::create_symlink(o.db, alias.db);
  alias.rerun = Rerun::kAll;
  launcher_.started.clear();
  EXPECT_EQ(Run(alias), kExitStorageFailed);
  EXPECT_NE(err_.str().find("in use by another `ditbench run`"), std::string::npos)
      << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
}

TEST_F(SweepRunTest, TwoDatabasesInOneFolderKeepTheirFiles) {
  auto a = Options(kSweep);
  a.db = dir_ / "a.db";
  auto b = a;
  b.db = dir_ / "b.db";
  ASSERT_EQ(Run(a), 0) << err_.str();
  ASSERT_EQ(Run(b), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 4u);
  const auto a_dir = launcher_.started[0].run_dir, b_dir = launcher_.started[2].run_dir;
  EXPECT_EQ(a_dir, dir_ / "a.runs" / "1" / a_dir.filename());
  EXPECT_EQ(b_dir, dir_ / "b.runs" / "1" / a_dir.filename());  // same campaign id and key
  EXPECT_TRUE(std::filesystem::exists(a_dir / "trial.json"));
  EXPECT_TRUE(std::filesystem::exists(b_dir / "trial.json"));
}

TEST_F(SweepRunTest, RunFolderOfAnotherDatabaseIsRefused) {
  auto a = Options(kSweep);
  a.db = dir_ / "a.db";
  a.run_root = dir_ / "shared-runs";
  auto b = a;
  b.db = dir_ / "b.db";
  ASSERT_EQ(Run(a), 0) << err_.str();
  launcher_.started.clear();
  EXPECT_EQ(Run(b), 2);
  EXPECT_NE(err_.str().find("holds the trials of another database"), std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find("a.db"), std::string::npos) << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(Run(a), 0) << err_.str();  // its own database is welcome back
}

TEST_F(SweepRunTest, CapacitySkippedTrialsRunWhenResumedWithMoreSlots) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  ASSERT_EQ(Column("SELECT status FROM results WHERE ulysses = 4")[0], "skipped");
  launcher_.started.clear();
  o.gpus = "cpu:4";
  EXPECT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 1u);  // ulysses 4 only; ulysses 3 is still invalid
  EXPECT_EQ(launcher_.started[0].world_size, 4);
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok", "skipped", "ok"}));
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "1");
}

TEST_F(SweepRunTest, DryRunSaysWhatIsAlreadyRecordedAndWhatWouldRun) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.started.clear();
  o.gpus = "cpu:4";
  o.dry_run = true;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  const std::string text = out_.str();
  EXPECT_NE(text.find("recorded ok: kept"), std::string::npos) << text;
  EXPECT_NE(text.find("recorded skipped: kept (4 heads are not divisible by ulysses=3 "
                      "(pad_heads: true pads them to 6, +50.0% attention work))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("run (skipped earlier; fits this machine now)"), std::string::npos) << text;
  EXPECT_NE(text.find("would resume campaign 1: 3 trial(s) already recorded and kept, 1 to run"),
            std::string::npos)
      << text;
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'skipped'")[0], "2");
}

TEST_F(SweepRunTest, ChangedSpecStartsANewCampaignAndSaysWhatChanged) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  std::string changed = kSweep;
  changed.replace(changed.find("steps: 2"), 8, "steps: 3");
  std::ofstream(o.sweep) << changed;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_NE(out_.str().find("sweep 's' changed since campaign 1 began: starting a new campaign"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("- defaults: {model: pixart-alpha-tiny, steps: 2"), std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("+ defaults: {model: pixart-alpha-tiny, steps: 3"), std::string::npos)
      << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "2");

  // Unchanged since campaign 2: resumed, nothing runs.
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0);
  EXPECT_TRUE(launcher_.started.empty());
}

TEST_F(SweepRunTest, ContinueKeepsTheCampaignOfAChangedSpec) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  std::string changed = kSweep;
  changed.replace(changed.find("ulysses: [1, 2, 3, 4]"), 21, "ulysses: [1, 2, 3, 4, 8]");
  std::ofstream(o.sweep) << changed;
  o.keep_campaign = true;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(out_.str().find("changed since"), std::string::npos) << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "1");
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "5");
}

TEST_F(SweepRunTest, DamagedDatabaseIsRefusedBeforeAnyTrialRuns) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  {
    SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    ASSERT_EQ(sqlite3_exec(db.get(), "ALTER TABLE trials DROP COLUMN coordinator_pid", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
  }
  launcher_.started.clear();
  o.fresh = true;
  EXPECT_EQ(Run(o), kExitStorageFailed);
  EXPECT_NE(err_.str().find("table 'trials' lacks column 'coordinator_pid'"), std::string::npos)
      << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "1");
}

TEST_F(SweepRunTest, TrialMeasuredOnABusyMachineIsFlaggedAndItsHealthStored) {
  test::FakeHealthProbe probe;
  probe.busy_samples = 1;  // busy at the first trial's start only
  health_ = &probe;
  EXPECT_EQ(Run(Options(kSweep)), 0) << err_.str();
  EXPECT_EQ(probe.samples, 4);  // start and end of the two trials that ran
  EXPECT_NE(out_.str().find("[machine busy: load 3.00 on 2 cores; others used 1.00 cores: burn "
                            "(pid 4242) 1.00]"),
            std::string::npos)
      << out_.str();
  EXPECT_EQ(Column("SELECT json_extract(t.health_json, '$.busy') FROM trials t "
                   "WHERE t.status = 'ok' ORDER BY json_extract(t.config_json, '$.ulysses')"),
            (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(Column("SELECT json_extract(health_json, '$.start.busiest[0].name') FROM trials "
                   "WHERE json_extract(health_json, '$.busy') = 1")[0],
            "burn");
  EXPECT_EQ(Column("SELECT COUNT(*) FROM trials WHERE status = 'skipped' AND health_json IS NULL")[0],
            "2");
  // The public view carries the flag and what was busy; unsampled trials read NULL.
  EXPECT_EQ(Column("SELECT COALESCE(busy, 'null') || ' ' || COALESCE(health_note, '-') FROM "
                   "results ORDER BY status, ulysses"),
            (std::vector<std::string>{"1 load 3.00 on 2 cores; others used 1.00 cores: burn "
                                      "(pid 4242) 1.00",
                                      "0 -", "null -", "null -"}));
}

TEST_F(SweepRunTest, RerunBusyRunsAgainOnlyTheTrialsMeasuredOnABusyMachine) {
  test::FakeHealthProbe probe;
  probe.busy_samples = 1;  // busy at the first trial's start only
  health_ = &probe;
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(Column("SELECT COUNT(*) FROM results WHERE busy = 1")[0], "1");
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();  // without --rerun busy: nothing runs
  EXPECT_TRUE(launcher_.started.empty());
  o.rerun = Rerun::kBusy;
  EXPECT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 1u);
  EXPECT_EQ(launcher_.started[0].world_size, 1);  // ulysses 1: the busy one
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE busy = 1")[0], "0");
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "1");
}

TEST_F(SweepRunTest, ATrialDisturbedOnlyInTheMiddleIsFlaggedBusy) {
  // Idle at the trial's start and end; another program runs only while it is in flight. The
  // coordinator samples the machine while trials run (a fake clock a second on per poll).
  test::FakeHealthProbe probe;
  double clock = 0;
  launcher_.waits_before_finish = 2;
  int polls = 0;
  launcher_.on_wait = [&](int) {
    clock += 1;
    probe.disturbed = polls++ == 0;  // during the first trial's first poll only
  };
  auto o = Options(kSweep);
  ASSERT_EQ(RunSweep(o, SweepEffects{launcher_, interrupt_, gpus_, &probe, [&] { return clock; }},
                     out_, err_),
            0)
      << err_.str();
  EXPECT_EQ(Column("SELECT json_extract(health_json, '$.busy') || ' ' || "
                   "json_extract(health_json, '$.start.busy') || ' ' || "
                   "json_extract(health_json, '$.during.busy') || ' ' || "
                   "json_extract(health_json, '$.end.busy') FROM trials WHERE status = 'ok' "
                   "ORDER BY json_extract(config_json, '$.ulysses')"),
            (std::vector<std::string>{"1 0 1 0", "0 0 0 0"}));
  EXPECT_NE(out_.str().find("[machine busy: load 3.00 on 2 cores"), std::string::npos)
      << out_.str();
}

// A serving trial of two replicas, 12 requests at 4 a second after 2 warm-up ones, on a machine
// busy over the first two seconds of its load (the fake ranks' load starts at 1000 s of the
// host's clock; every health sample judges 1000 - 1002 s busy).
constexpr const char* kServedSweep = R"(name: served
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3, dp: 2}
matrix:
  serve: [{arrivals: poisson, rate: 4, requests: 12, warmup_requests: 2}]
)";

constexpr const char* kBusyRequests =
    "SELECT v.value FROM metric_values v JOIN trials t ON t.id = v.trial_id "
    "WHERE v.name = 'busy_requests' AND t.status = 'ok'";

TEST_F(SweepRunTest, AServingTrialCountsTheRequestsServedWhileTheMachineWasBusy) {
  test::FakeHealthProbe probe;
  probe.disturbed = true;
  probe.judged = {1000.0, 1002.0};
  health_ = &probe;
  TrialConfig config;
  launcher_.on_start = [&](const LaunchRequest& r) {
    config = ReadTrialFile(r.run_dir / "trial.json").config;
  };
  ASSERT_EQ(Run(Options(kServedSweep)), 0) << err_.str();
  ASSERT_TRUE(config.serve);
  // The timed requests that arrived in the first two seconds (every one ends after the load's
  // 0): 6 of the 12 with this seed.
  const std::vector<Request> load = TrialRequests(config);
  int expected = 0;
  for (const Request& q : load)
    if (q.index >= config.serve->warmup_requests && q.arrival_s < 2.0) ++expected;
  ASSERT_GT(expected, 0);
  ASSERT_LT(expected, 12) << "some of the 12 timed requests arrived after the busy stretch";
  const std::vector<std::string> busy = Column(kBusyRequests);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(std::stod(busy[0]), expected);
  EXPECT_EQ(Column("SELECT json_extract(health_json, '$.busy_windows') FROM trials"),
            (std::vector<std::string>{"[[1000.0,1002.0]]"}));
}

// Under a launcher whose ranks may run on other hosts (Slurm), their clock is not the
// coordinator's: the trial is busy as a whole, and its requests are not judged one by one.
TEST_F(SweepRunTest, RequestsAreNotMarkedBusyWhenTheRanksMayRunOnAnotherHost) {
  test::FakeHealthProbe probe;
  probe.disturbed = true;
  probe.judged = {1000.0, 1002.0};
  health_ = &probe;
  launcher_.shares_host = false;
  ASSERT_EQ(Run(Options(kServedSweep)), 0) << err_.str();
  EXPECT_EQ(Column("SELECT busy FROM results WHERE status = 'ok'"),
            (std::vector<std::string>{"1"}));
  EXPECT_TRUE(Column(kBusyRequests).empty());
}

TEST_F(SweepRunTest, RequireIdleWaitsForABusyMachineToCalmDown) {
  test::FakeHealthProbe probe;
  probe.busy_samples = 2;
  health_ = &probe;
  auto o = Options(kSweep);
  o.require_idle_s = 60;
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_NE(out_.str().find("machine busy (load 3.00"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("waiting up to 60 s"), std::string::npos) << out_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
}

TEST_F(SweepRunTest, RequireIdleRefusesAMachineThatStaysBusy) {
  test::FakeHealthProbe probe;
  probe.busy_samples = 1000;
  health_ = &probe;
  auto o = Options(kSweep);
  o.require_idle_s = 0;  // no wait: refuse at once
  EXPECT_EQ(Run(o), 1) << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_NE(out_.str().find("machine still busy (load 3.00"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("run the same command again to resume"), std::string::npos);

  probe.busy_samples = 0;  // calm again: the resumed run starts both trials
  probe.samples = 0;
  EXPECT_EQ(Run(o), 0) << err_.str() << out_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
}

TEST_F(SweepRunTest, TrialOfALiveCoordinatorIsNeitherInterruptedNorStarted) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  {
    // The test runner's parent stands in for a live coordinator on this host.
    SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    Statement update(db.get(),
                     "UPDATE trials SET status = 'running', coordinator_host = ?, "
                     "coordinator_pid = ? WHERE json_extract(config_json, '$.ulysses') = 2");
    update.Bind(1, Hostname()).Bind(2, static_cast<std::int64_t>(getppid())).Run();
  }
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_NE(out_.str().find("still running under a live coordinator"), std::string::npos)
      << out_.str();
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "running");
}

TEST_F(SweepRunTest, GpuPositionOutsideTheInheritedSetIsAUsageError) {
  gpus_.gpus.assign(8, GpuInfo{"Fake GPU", ""});
  gpus_.inherited = "4,5";
  auto o = Options(kSweep);
  o.gpus = "0,2";
  EXPECT_EQ(Run(o), 2);
  EXPECT_NE(err_.str().find("CUDA_VISIBLE_DEVICES='4,5'"), std::string::npos) << err_.str();
}

TEST_F(SweepRunTest, MoreCpuSlotsThanCoresIsAWarning) {
  auto o = Options(kSweep);
  o.gpus = "cpu:100000";
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_NE(err_.str().find("warning: --gpus cpu:100000 asks for 100000 CPU slots on a machine "
                            "with"),
            std::string::npos)
      << err_.str();
  o.gpus = "cpu:1";
  o.fresh = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(err_.str(), "");
}

}  // namespace
}  // namespace ditbench::sweep_run_test
