// The sweep loop's searches and repeated launches: replicates, on_oom: skip_larger, --budget
// and the halving search, over the fake launcher.
#include <gtest/gtest.h>

#include "analysis/configuration_group.h"
#include "experiments/trial.h"
#include "plan/cost_model.h"
#include "plan/halving.h"
#include "plan/sweep_plan.h"
#include "storage/results_db.h"
#include "tests/support/sweep_run_fixture.h"
#include "tests/support/sweeps.h"

namespace ditbench::sweep_run_search_test {
namespace {

using test::SweepRunTest;

constexpr const char* kReplicated = R"(name: rep
replicates: 3
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  seed: [0, 1]
)";

constexpr const char* kStatusBySeed =
    "SELECT r.status || ' ' || r.launches FROM results r JOIN trials t ON t.trial_key = "
    "r.trial_key ORDER BY json_extract(t.config_json, '$.seed')";

std::vector<std::string> Folders(const std::vector<LaunchRequest>& started) {
  std::vector<std::string> folders;
  for (const auto& request : started) folders.push_back(request.run_dir.filename().string());
  return folders;
}

TrialConfig ReplicatedConfig(int seed) {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.steps = 2;
  c.seed = seed;
  return c;
}

TEST_F(SweepRunTest, ReplicatesLaunchEveryTrialNTimesInterleavedAcrossTheSweep) {
  EXPECT_EQ(Run(Options(kReplicated)), 0) << err_.str();
  const std::string a = TrialKey(ReplicatedConfig(0)), b = TrialKey(ReplicatedConfig(1));
  // All trials once, then the second launch of each, then the third.
  EXPECT_EQ(Folders(launcher_.started),
            (std::vector<std::string>{a, b, a + ".launch1", b + ".launch1", a + ".launch2",
                                      b + ".launch2"}));
  EXPECT_EQ(Column("SELECT status || ' ' || launches || '/' || replicates || ' ' || ci_scope "
                   "|| ' ' || iterations FROM results ORDER BY trial_key"),
            (std::vector<std::string>(2, "ok 3/3 launches 9")));
  EXPECT_EQ(Column("SELECT count(*) FROM launches WHERE status = 'ok'")[0], "6");
  EXPECT_EQ(Column("SELECT group_concat(DISTINCT launch) FROM samples")[0], "0,1,2");
  // Every launch keeps its own folder and median.
  EXPECT_EQ(Column("SELECT count(DISTINCT run_dir) FROM launches")[0], "6");
  EXPECT_EQ(Column("SELECT count(*) FROM launches WHERE latency_ms IS NULL")[0], "0");
  EXPECT_NE(out_.str().find("launch 3/3"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("over 3 launches: median"), std::string::npos) << out_.str();

  launcher_.started.clear();
  EXPECT_EQ(Run(Options(kReplicated)), 0);  // resumed: every launch recorded, nothing runs
  EXPECT_TRUE(launcher_.started.empty());
}

TEST_F(SweepRunTest, CampaignKilledBetweenReplicatesRunsOnlyTheMissingLaunches) {
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 3;  // Ctrl-C during the second launch of the first trial
  auto o = Options(kReplicated);
  EXPECT_EQ(Run(o), 130);
  EXPECT_EQ(launcher_.started.size(), 3u);
  EXPECT_EQ(Column(kStatusBySeed),
            (std::vector<std::string>{"interrupted 1", "ok 1"}));

  interrupt_.requested = false;
  launcher_.interrupt = nullptr;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  const std::string a = TrialKey(ReplicatedConfig(0)), b = TrialKey(ReplicatedConfig(1));
  // The interrupted launch and the ones never started, still interleaved; no first launch.
  EXPECT_EQ(Folders(launcher_.started),
            (std::vector<std::string>{a + ".launch1", b + ".launch1", a + ".launch2",
                                      b + ".launch2"}));
  EXPECT_EQ(Column(kStatusBySeed),
            (std::vector<std::string>(2, "ok 3")));
  EXPECT_EQ(Column("SELECT count(*) FROM launches")[0], "6");
  EXPECT_EQ(Column("SELECT count(*) FROM samples WHERE warmup = 0")[0], "18");
}

TEST_F(SweepRunTest, TrialLaunchLeftRunningByADeadCoordinatorRunsAgainAlone) {
  auto o = Options(kReplicated);
  ASSERT_EQ(Run(o), 0);
  {  // as if a coordinator died during the third launch of seed 1
    SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    Exec(db.get(), "UPDATE launches SET status = 'running' WHERE launch = 2 AND trial_id = "
                   "(SELECT id FROM trials WHERE json_extract(config_json, '$.seed') = 1)");
    Exec(db.get(), "UPDATE trials SET status = 'running', coordinator_host = 'gone', "
                   "coordinator_pid = 1 WHERE json_extract(config_json, '$.seed') = 1");
  }
  // ... before its ranks ended: no outcome in its folder (runner/unrecorded_launch.h).
  ASSERT_TRUE(std::filesystem::remove(
      dir_ / "results.runs" / "1" / (TrialKey(ReplicatedConfig(1)) + ".launch2") /
      "ditbench-outcome.json"));
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(Folders(launcher_.started),
            (std::vector<std::string>{TrialKey(ReplicatedConfig(1)) + ".launch2"}));
  EXPECT_EQ(Column(kStatusBySeed),
            (std::vector<std::string>(2, "ok 3")));
}

// A scheduler job adopted after a coordinator restart is recorded as the launch it ran: launch
// 0, measured already, is kept, and the adopted launch does not stay `running`.
TEST_F(SweepRunTest, AdoptedJobIsRecordedAsTheLaunchItRan) {
  const RunOptions o = Options(kReplicated);
  ASSERT_EQ(Run(o), 0) << err_.str();
  const std::string key = TrialKey(ReplicatedConfig(0));
  const std::string of_trial =
      " FROM launches l JOIN trials t ON t.id = l.trial_id WHERE t.trial_key = '" + key + "'";
  {  // As if a coordinator, now gone, had launch 1 of this trial running as Slurm job 42
     // (a launch not measured before: MarkRunning leaves a measured one as it is).
    auto db = ResultsDb::Open(o.db);
    const std::string run_dir = Column("SELECT l.run_dir" + of_trial + " AND l.launch = 1").at(0);
    {
      SqliteConnection raw = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
      Exec(raw.get(), ("DELETE FROM launches WHERE launch = 1 AND trial_id = (SELECT id FROM "
                       "trials WHERE trial_key = '" + key + "')").c_str());
    }
    TrialRecord running;
    running.trial_key = key;
    running.config = ReplicatedConfig(0);
    running.world_size = 1;
    running.launch = 1;
    running.replicates = 3;
    running.run_dir = run_dir;
    running.started_at = 1;
    running.coordinator_host = "a-host-that-is-gone";
    running.coordinator_pid = 1;
    const std::int64_t campaign = db->reader().Campaigns().back().id;
    db->writer().MarkRunning(campaign, running);
    db->writer().SetSchedulerJob(campaign, key, "42");
  }
  ASSERT_EQ(Column("SELECT l.launch || ' ' || l.status" + of_trial + " ORDER BY l.launch"),
            (std::vector<std::string>{"0 ok", "1 running", "2 ok"}));
  launcher_.attachable = {"42"};
  launcher_.started.clear();
  ASSERT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(launcher_.attached.size(), 1u);
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(Column("SELECT l.launch || ' ' || l.status" + of_trial + " ORDER BY l.launch"),
            (std::vector<std::string>{"0 ok", "1 ok", "2 ok"}));
  EXPECT_EQ(Column("SELECT count(DISTINCT s.launch) FROM samples s JOIN trials t ON t.id = "
                   "s.trial_id WHERE t.trial_key = '" + key + "'")[0],
            "3");
  EXPECT_NE(out_.str().find("[adopted] " + key), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("launch 2"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, AFailedLaunchEndsItsTrialAndTheOthersGoOn) {
  launcher_.fail_ulysses = 2;
  auto o = Options(R"(name: rep
replicates: 2
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  ulysses: [1, 2]
)");
  EXPECT_EQ(Run(o), 1);
  EXPECT_EQ(launcher_.started.size(), 3u);  // ulysses 2 launched once, never again
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "failed"}));
  EXPECT_NE(Column("SELECT error FROM results WHERE ulysses = 2")[0].find("launch 1 of 2: "),
            std::string::npos);
  EXPECT_NE(out_.str().find("not run (an earlier launch of this trial failed)"),
            std::string::npos);
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 1);  // the failure is kept: nothing runs
  EXPECT_TRUE(launcher_.started.empty());
}

constexpr const char* kOomSweep = R"(name: oom
on_oom: skip_larger
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256, 512]
  ulysses: [2, 1]
include:
  - {model: sd3-medium-tiny, resolution: 512}
)";

TEST_F(SweepRunTest, OnOomSkipLargerSkipsTrialsAtLeastAsLargeAsOneThatRanOutOfMemory) {
  launcher_.oom_resolution = 256;
  EXPECT_EQ(Run(Options(kOomSweep)), 1);  // an OOM is a failure
  // 256 px ulysses 2 runs out of memory; 256 px on one rank and both 512 px trials of the same
  // model are at least as large; another model is never predicted.
  EXPECT_EQ(launcher_.started.size(), 2u);
  TrialConfig oomed;
  oomed.model = "pixart-alpha-tiny";
  oomed.resolution = 256;
  oomed.steps = 2;
  oomed.ulysses = 2;
  EXPECT_EQ(Column("SELECT status || ': ' || COALESCE(error, '') FROM results "
                   "WHERE model = 'pixart-alpha-tiny' ORDER BY resolution, ulysses DESC"),
            (std::vector<std::string>{
                "oom: " + Column("SELECT error FROM results WHERE status = 'oom'")[0],
                "skipped: predicted OOM after " + TrialKey(oomed),
                "skipped: predicted OOM after " + TrialKey(oomed),
                "skipped: predicted OOM after " + TrialKey(oomed)}));
  EXPECT_EQ(Column("SELECT status FROM results WHERE model = 'sd3-medium-tiny'")[0], "ok");
  EXPECT_NE(out_.str().find("3 skipped as predicted OOM"), std::string::npos) << out_.str();

  // Resumed: the OOM is still recorded, so the predicted trials are judged again and skipped
  // again; nothing is launched.
  launcher_.started.clear();
  EXPECT_EQ(Run(Options(kOomSweep)), 1);
  EXPECT_TRUE(launcher_.started.empty());
}

TEST_F(SweepRunTest, WithoutOnOomEveryTrialRuns) {
  launcher_.oom_resolution = 256;
  std::string yaml = kOomSweep;
  yaml.replace(yaml.find("on_oom: skip_larger\n"), 20, "");
  EXPECT_EQ(Run(Options(yaml)), 1);
  EXPECT_EQ(launcher_.started.size(), 5u);
}

TEST_F(SweepRunTest, BudgetRunsBaselinesFirstAndStopsCleanlyWhenItWouldBeSpent) {
  // A clock that advances 100 s per trial started: the budget of 250 s admits three.
  int started_before = 0;
  auto o = Options(R"(name: budget
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  ulysses: [2, 1]
  seed: [0, 1]
)");
  o.budget_s = 250;
  out_.str("");
  err_.str("");
  SweepEffects effects{launcher_, interrupt_, gpus_, health_};
  effects.now = [this, &started_before] {
    return 100.0 * static_cast<double>(launcher_.started.size() + started_before);
  };
  EXPECT_EQ(RunSweep(o, effects, out_, err_), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 3u);
  // The two 1-rank trials first, though the sweep lists ulysses 2 first.
  EXPECT_EQ(launcher_.started[0].world_size, 1);
  EXPECT_EQ(launcher_.started[1].world_size, 1);
  EXPECT_EQ(launcher_.started[2].world_size, 2);
  EXPECT_NE(out_.str().find("stopped: the budget of 250 s is spent; 3 ran (3 ok), 1 launch(es) "
                            "not started"),
            std::string::npos)
      << out_.str();
  EXPECT_EQ(Column("SELECT finished_at IS NULL FROM campaigns")[0], "1");  // still open

  // The next run resumes with a new budget and runs what is left.
  started_before = 3;
  launcher_.started.clear();
  EXPECT_EQ(RunSweep(o, effects, out_, err_), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 1u);
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE status = 'ok'")[0], "4");
}

constexpr const char* kHalving = R"(name: halving
search: {strategy: halving, keep: 0.25}
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1,
           repeats: {min: 3, max: 6}}
matrix:
  seed: [5, 1, 7, 0, 3, 2, 6, 4]
)";

TEST_F(SweepRunTest, HalvingScreensEveryTrialThenReMeasuresTheFastestRoundByRound) {
  launcher_.ms_per_seed = 1;  // seed 0 is the fastest, seed 7 the slowest
  EXPECT_EQ(Run(Options(kHalving)), 0) << err_.str();
  // Round 0: 8 screening launches (repeats.min only); round 1: the fastest 2 (seeds 0, 1);
  // round 2: the fastest of those (seed 0); then one is left.
  ASSERT_EQ(launcher_.started.size(), 11u);
  for (int i = 0; i < 8; ++i) {
    const TrialFile f = ReadTrialFile(launcher_.started[i].run_dir / "trial.json");
    EXPECT_EQ(f.config.repeats.max, 3) << i;
  }
  // Round 1 in sweep order (seed 1 is listed before seed 0), with the full repeats policy.
  const TrialFile round1 = ReadTrialFile(launcher_.started[8].run_dir / "trial.json");
  EXPECT_EQ(round1.config.repeats.max, 6);
  EXPECT_EQ(round1.config.seed, 1);
  EXPECT_EQ(ReadTrialFile(launcher_.started[9].run_dir / "trial.json").config.seed, 0);
  EXPECT_EQ(ReadTrialFile(launcher_.started[10].run_dir / "trial.json").config.seed, 0);
  EXPECT_EQ(Column("SELECT group_concat(n, ',') FROM (SELECT count(*) AS n FROM launches l "
                   "JOIN trials t ON t.id = l.trial_id GROUP BY t.id "
                   "ORDER BY json_extract(t.config_json, '$.seed'))")[0],
            "3,2,1,1,1,1,1,1");
  EXPECT_NE(out_.str().find("halving search: done after round 2"), std::string::npos)
      << out_.str();

  // Resumed: every round is recorded; nothing runs again.
  launcher_.started.clear();
  EXPECT_EQ(Run(Options(kHalving)), 0);
  EXPECT_TRUE(launcher_.started.empty());
}

TEST_F(SweepRunTest, HalvingInterruptedMidRoundResumesThatRound) {
  launcher_.ms_per_seed = 1;
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 9;  // Ctrl-C during round 1's first launch
  auto o = Options(kHalving);
  EXPECT_EQ(Run(o), 130);
  interrupt_.requested = false;
  launcher_.interrupt = nullptr;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  // Round 1 again (both of its launches: the interrupted one and the one never started), then
  // round 2; no screening launch again.
  ASSERT_EQ(launcher_.started.size(), 3u);
  EXPECT_EQ(ReadTrialFile(launcher_.started[0].run_dir / "trial.json").config.seed, 1);
  EXPECT_EQ(ReadTrialFile(launcher_.started[1].run_dir / "trial.json").config.seed, 0);
  EXPECT_EQ(ReadTrialFile(launcher_.started[2].run_dir / "trial.json").config.seed, 0);
  EXPECT_EQ(Column("SELECT count(*) FROM launches WHERE status != 'ok'")[0], "0");
}

// Halving ranks a trial among the trials the report ranks it with: one report group
// (analysis/configuration_group.h), whatever else the configurations differ in.
TEST(HalvingGroupTest, IsTheReportGroupOfTheTrial) {
  TrialConfig a;
  a.scope = Scope::kPipeline;
  TrialConfig b = a;
  b.ulysses = 2;
  b.vae_tile = 128;
  b.seed = 7;
  EXPECT_EQ(HalvingGroup(a), HalvingGroup(b));
  EXPECT_EQ(HalvingGroup(b), ReportGroupOf(b).Text());
  TrialConfig command = a;
  command.workload = Workload::kCommand;
  command.command = {"./bench"};
  EXPECT_NE(HalvingGroup(a), HalvingGroup(command));  // the report never ranks them together
  TrialConfig fp16 = a;
  fp16.precision = Precision::kFp16;
  EXPECT_NE(HalvingGroup(a), HalvingGroup(fp16));
}

// `run --search advise`: 24 layouts whose time follows a known law, a budget that admits 10
// launches (a clock that advances 100 s per launch started).
constexpr const char* kAdvise = R"(name: advise
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  ulysses: [1, 2, 4]
  ring: [1, 2]
  cfg: [1, 2]
  pipefusion: [1, 2]
)";

// The law: the cost model's own terms with chosen coefficients (plan/cost_model.h), so that a
// fit can find it; more ranks compute less each but communicate more.
double AdviseLaw(const TrialConfig& c) {
  const std::vector<double> law = {3.0, 400.0, 2.0, 0.0, 0.4, 2.0, 0.4, 2.0, 0.4, 2.0, 0, 0};
  const auto x = CostFeatures(c).value();
  double ms = 0;
  for (std::size_t j = 0; j < law.size(); ++j) ms += law[j] * x[j];  // no time-sharing terms
  return ms;
}

TEST_F(SweepRunTest, AdviseSearchMeasuresTheTrueWinnerWithinABudgetOfTenTrials) {
  launcher_.law = AdviseLaw;
  auto o = Options(kAdvise);
  o.gpus = "cpu:32";
  o.search = SearchOrder::kAdvise;
  o.budget_s = 999;  // the 11th launch would start at 1000 s
  SweepEffects effects{launcher_, interrupt_, gpus_, health_};
  effects.now = [this] { return 100.0 * static_cast<double>(launcher_.started.size()); };
  out_.str("");
  EXPECT_EQ(RunSweep(o, effects, out_, err_), 0) << err_.str();
  EXPECT_LE(launcher_.started.size(), 10u);
  // The law's winner among the sweep's valid trials.
  const SweepPlan plan =
      PlanSweep(test::ParseValidSweep(kAdvise), {32, false}, PlanAssumptions{});
  std::string winner;
  double best = 0;
  for (const PlannedTrial& t : plan.trials) {
    if (t.invalid_reason) continue;
    if (winner.empty() || AdviseLaw(t.config) < best) {
      best = AdviseLaw(t.config);
      winner = t.key;
    }
  }
  std::vector<std::string> measured;
  for (const auto& request : launcher_.started) measured.push_back(request.run_dir.filename());
  EXPECT_NE(std::find(measured.begin(), measured.end(), winner), measured.end()) << out_.str();
  // Every launch has its reason, on the console and in the database, in order.
  EXPECT_EQ(Column("SELECT count(*) FROM search_reasons")[0],
            std::to_string(launcher_.started.size()));
  EXPECT_EQ(Column("SELECT trial_key FROM search_reasons ORDER BY step"), measured);
  EXPECT_NE(out_.str().find("advise search: next " + measured.front() + ": teaches the cost "
                            "model the most"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("advise search: done"), std::string::npos) << out_.str();
}

}  // namespace
}  // namespace ditbench::sweep_run_search_test
