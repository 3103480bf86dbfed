#include "runner/ingest.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/atomic_file.h"
#include "base/terminal_text.h"
#include "contract/npy.h"
#include "experiments/trial_requests.h"
#include "tests/support/served_trials.h"
#include "tests/support/temp_dir.h"

namespace ditbench::ingest_test {
namespace {

RankResult Rank(int rank, std::vector<double> timed, std::vector<double> warmup = {100}) {
  RankResult r;
  r.rank = rank;
  r.world_size = 2;
  r.device = "cpu";
  int iteration = 0;
  for (double ms : warmup) r.samples.push_back({rank, iteration++, "iteration", ms, true});
  for (double ms : timed) {
    r.samples.push_back({rank, iteration, "iteration", ms, false});
    r.samples.push_back({rank, iteration++, "step:0", ms / 2, false});
  }
  r.peak_mem_mb = 100.0 + rank;
  return r;
}

TrialConfig TinyTwoRanks() {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.ulysses = 2;
  c.steps = 4;
  c.repeats.min = 2;  // the ranks below time two iterations
  return c;
}

class IngestTrialTest : public ::testing::Test {
 protected:
  void WriteRank(const RankResult& r) {
    WriteFileAtomically(RankResultPath(dir_.path(), r.rank), ToJson(r).dump());
  }
  // The only replica's leader of a served trial, having served `load` in order, 100 ms each.
  static RankResult Leader(const std::vector<Request>& load, int warmup_requests) {
    RankResult leader;
    leader.device = "cpu";
    leader.stop_reason = "served";
    double free_ms = 0;
    for (const Request& request : load) {
      RequestRecord q;
      q.index = request.index;
      q.arrival_ms = request.arrival_s * 1000;
      q.start_ms = std::max(q.arrival_ms, free_ms);
      q.end_ms = free_ms = q.start_ms + 100;
      q.isolated_ms = 100;
      leader.requests.push_back(q);
      leader.samples.push_back(
          {0, q.index, kIterationStage, q.end_ms - q.arrival_ms, q.index < warmup_requests});
    }
    return leader;
  }
  // The trial file the coordinator writes, with a served trial's requests.
  void WriteTrialFile(const TrialConfig& config, const RequestList& requests) {
    WriteFileAtomically(dir_ / kTrialFileName,
                        ToJson(TrialFile{"k", "s", config, "cpu", requests}).dump());
  }
  LaunchOutcome Outcome(std::vector<RankExit> ranks, int failed = -1) {
    LaunchOutcome o;
    o.ranks = std::move(ranks);
    o.first_failed_rank = failed;
    return o;
  }
  test::TempDir dir_;
};

TEST_F(IngestTrialTest, AllRanksOkGiveAnOkRecordWithEverySample) {
  WriteRank(Rank(0, {10, 11}));
  WriteRank(Rank(1, {12, 13}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kOk);
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.samples.size(), 2u * (1 + 2 * 2));
}

TEST_F(IngestTrialTest, OomExitCodeIsClassifiedAsOom) {
  RankResult failed = Rank(1, {});
  failed.status = "oom";
  failed.error = "out of memory: tried to allocate 20 GiB";
  WriteRank(failed);
  RankExit oom{true, kWorkerOutOfMemory, 0, false};
  RankExit killed{true, 0, SIGKILL, true};
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({killed, oom}, 1));
  EXPECT_EQ(r.status, TrialStatus::kOom);
  EXPECT_NE(r.error.find("tried to allocate"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, CrashUsesTheLastLogLine) {
  std::ofstream(RankLogPath(dir_.path(), 0)) << "starting\nSegmentation fault in attention\n\n";
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(),
                       Outcome({{true, 0, SIGSEGV, false}, {true, 0, SIGKILL, true}}, 0));
  EXPECT_EQ(r.status, TrialStatus::kCrashed);
  EXPECT_NE(r.error.find("signal 11"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("Segmentation fault in attention"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, TerminalControlsFromTheWorkerAreStripped) {
  std::ofstream(RankLogPath(dir_.path(), 0))
      << "\x1b[31mSegfault\x1b[0m \x1b]0;pwned\a in \x1b[2Jattention\n";
  RankResult failed = Rank(1, {});
  failed.status = "failed";
  failed.error = "bad\x1b[1;1H\rthing\x07";
  WriteRank(failed);
  auto crashed = IngestTrial(TinyTwoRanks(), "k", dir_.path(),
                             Outcome({{true, 0, SIGSEGV, false}, {true, 0, SIGKILL, true}}, 0));
  EXPECT_NE(crashed.error.find(": Segfault  in attention"), std::string::npos) << crashed.error;
  EXPECT_EQ(crashed.error.find('\x1b'), std::string::npos);
  auto said = IngestTrial(TinyTwoRanks(), "k", dir_.path(),
                          Outcome({{true, 0, SIGKILL, true}, {true, 1, 0, false}}, 1));
  EXPECT_EQ(said.error, "rank 1 exited with code 1: badthing");
}

TEST_F(IngestTrialTest, ATwentyMegabyteErrorIsStoredCappedWithAMarker) {
  RankResult failed = Rank(1, {});
  failed.status = "failed";
  failed.error = "boom " + std::string(20 << 20, 'x');
  WriteRank(failed);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(),
                       Outcome({{true, 0, SIGKILL, true}, {true, 1, 0, false}}, 1));
  EXPECT_EQ(r.error.rfind("rank 1 exited with code 1: boom xxx", 0), 0u) << r.error.substr(0, 80);
  EXPECT_LE(r.error.size(), kStoredTextBytes + 40);
  EXPECT_NE(r.error.find("more bytes cut]"), std::string::npos);
}

TEST_F(IngestTrialTest, AWorkersEnvironmentIsStoredWithoutTerminalControls) {
  RankResult r0 = Rank(0, {10, 11});
  r0.environment = {{"build", "v1\x1b[2J\x1b]0;owned\a"},
                    {"libraries", {{"nccl\x1b[31m", "2.21\xc2\x9b"}}},
                    {"driver", std::string(5000, 'd')}};
  WriteRank(r0);
  WriteRank(Rank(1, {12, 13}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  ASSERT_EQ(r.status, TrialStatus::kOk) << r.error;
  EXPECT_EQ(r.worker_environment["build"], "v1");
  EXPECT_EQ(r.worker_environment["libraries"]["nccl"], "2.21");
  EXPECT_LT(r.worker_environment["driver"].get<std::string>().size(), 1100u);
  EXPECT_EQ(r.worker_environment.dump().find("\\u001b"), std::string::npos);
}

TEST_F(IngestTrialTest, CleanExitWithoutResultFilesIsAFailure) {
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("result file"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, TruncatedRankFileIsAFailureNotACrash) {
  WriteRank(Rank(0, {10}));
  std::ofstream(RankResultPath(dir_.path(), 1)) << "{\"format\": \"ditbench-rank-res";
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
}

TEST_F(IngestTrialTest, RankFileNamingAnotherRankIsAFailure) {
  WriteRank(Rank(0, {10}));
  RankResult liar = Rank(0, {12});  // says rank 0 ...
  WriteFileAtomically(RankResultPath(dir_.path(), 1), ToJson(liar).dump());  // ... in rank1.json
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_FALSE(r.metrics);
  EXPECT_NE(r.error.find("rank1.json: 'rank' is 0; expected 1 (the file name)"),
            std::string::npos)
      << r.error;
}

TEST_F(IngestTrialTest, MissingRankIsAFailureNamingIt) {
  WriteRank(Rank(1, {12}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("rank 0 has no readable result file"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, RankBeyondTheWorldSizeIsAFailure) {
  WriteRank(Rank(0, {10}));
  WriteRank(Rank(1, {12}));
  RankResult extra = Rank(2, {12});
  WriteRank(extra);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("rank 2 is outside the trial's world size 2"), std::string::npos)
      << r.error;
}

TEST_F(IngestTrialTest, RankFileWithAnotherWorldSizeIsAFailure) {
  WriteRank(Rank(0, {10}));
  RankResult r1 = Rank(1, {12});
  r1.world_size = 4;
  WriteRank(r1);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("'world_size' is 4; expected 2"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, EveryRankExactlyOnceHasNoProblem) {
  WriteRank(Rank(0, {10}));
  WriteRank(Rank(1, {12}));
  std::ofstream(dir_.path() / "rank1.log") << "log files are not result files\n";
  RankFiles files = ReadRankFiles(dir_.path(), 2);
  EXPECT_EQ(files.error, "");
  ASSERT_EQ(files.ranks.size(), 2u);
  EXPECT_EQ(files.ranks[1].rank, 1);
}

TEST_F(IngestTrialTest, RanksThatTimedDifferentIterationsAreAFailureNamingTheFile) {
  WriteRank(Rank(0, {1, 1, 1}));
  WriteRank(Rank(1, {100, 100}));  // the slow rank's third iteration is missing
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_FALSE(r.metrics);
  EXPECT_NE(r.error.find("rank1.json: 'samples' has no timed iteration 3"), std::string::npos)
      << r.error;
}

// `cache`: every rank must reuse the same steps. Ranks whose stored per-step records disagree
// fail the trial naming the step, the iteration and the rank file; records that agree are ok
// and every rank's flags are kept.
TEST_F(IngestTrialTest, RanksWhoseCacheDecisionsDisagreeAreAFailureNamingTheStep) {
  TrialConfig cached = TinyTwoRanks();
  cached.cache = {StepCache::Kind::kFbCache, 0.1, 1};
  RankResult zero = Rank(0, {10, 11}), one = Rank(1, {12, 13});
  for (RankResult* r : {&zero, &one})
    for (Sample& s : r->samples)
      if (s.stage == "step:0" && s.iteration == 2) s.reused = true;
  WriteRank(zero);
  WriteRank(one);
  auto agreed = IngestTrial(cached, "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(agreed.status, TrialStatus::kOk) << agreed.error;
  EXPECT_EQ(std::count_if(agreed.samples.begin(), agreed.samples.end(),
                          [](const Sample& s) { return s.reused; }),
            2);
  for (Sample& s : one.samples) s.reused = false;
  WriteRank(one);
  auto r = IngestTrial(cached, "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_FALSE(r.metrics);
  EXPECT_NE(r.error.find("rank1.json: 'samples' has step:0 of iteration 2 computed, which rank 0 "
                         "reused; the ranks' cache decisions disagree"),
            std::string::npos)
      << r.error;
}

// The computed shape: a rank whose latent is not the key's clip fails the trial naming its file;
// the shape the key names is ok.
TEST_F(IngestTrialTest, ARankThatComputedAnotherShapeIsAFailure) {
  const TrialConfig config = TinyTwoRanks();
  const std::int64_t side = config.resolution / 8;  // pixart-alpha-tiny: VAE downsample 8
  RankResult zero = Rank(0, {10, 11}), one = Rank(1, {12, 13});
  zero.latent_shape = one.latent_shape = {1, 4, side, side};
  WriteRank(zero);
  WriteRank(one);
  auto ok = IngestTrial(config, "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(ok.status, TrialStatus::kOk) << ok.error;
  one.latent_shape = {1, 4, side + 2, side};  // padded rows
  WriteRank(one);
  auto r = IngestTrial(config, "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find(fmt::format("rank1.json: 'latent_shape' is [1, 4, {}, {}], a different "
                                     "clip from the trial's",
                                     side + 2, side)),
            std::string::npos)
      << r.error;
}

TEST_F(IngestTrialTest, FewerTimedIterationsThanRepeatsMinIsAFailure) {
  WriteRank(Rank(0, {10}));
  WriteRank(Rank(1, {12}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("rank0.json: 'samples' has 1 timed iterations; expected at least 2"),
            std::string::npos)
      << r.error;
}

// A served load whose every request was warm-up has no timed request: a failure saying so,
// never an ok trial of 0 ms over 0 requests that a report would call the fastest.
TEST_F(IngestTrialTest, AServedLoadOfOnlyWarmUpRequestsIsAFailure) {
  TrialConfig config = test::TinyServedTrial(4, 0);
  config.serve->duration_s = 2;
  config.serve->warmup_requests = 50;
  const RequestList list = MaterializeRequests(config);
  WriteTrialFile(config, list);
  const std::vector<Request>& load = list.requests;
  ASSERT_GT(load.size(), 0u);
  WriteRank(Leader(load, config.serve->warmup_requests));
  auto r = IngestTrial(config, "k", dir_.path(), Outcome({{true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_FALSE(r.metrics);
  EXPECT_NE(r.error.find(fmt::format("rank0.json: 'requests': no timed request: all {} requests "
                                     "were warm-up (warmup_requests: 50)",
                                     load.size())),
            std::string::npos)
      << r.error;
}

// A served trial is checked and summarized against the requests its trial file holds, never a
// list generated again from its load: here the file's 4 requests arrive every 0.5 s, while the
// load would generate 6 Poisson arrivals; a leader that served the file's list is ok, its
// figures the file's requests'.
TEST_F(IngestTrialTest, AServedTrialIsCheckedAgainstTheRequestsOfItsTrialFile) {
  const TrialConfig config = test::TinyServedTrial(4, 6);
  RequestList file = MaterializeRequests(config);
  ASSERT_EQ(file.requests.size(), 6u);
  file.requests.resize(4);
  for (Request& q : file.requests) q.arrival_s = 0.5 * q.index;
  ASSERT_NE(file.requests[1].arrival_s, MaterializeRequests(config).requests[1].arrival_s);
  WriteTrialFile(config, file);
  WriteRank(Leader(file.requests, 0));
  const TrialRecord r = IngestTrial(config, "k", dir_.path(), Outcome({{true}}));
  ASSERT_EQ(r.status, TrialStatus::kOk) << r.error;
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.metrics->iterations, 4);
  EXPECT_DOUBLE_EQ(r.metrics->latency_ms, 100);
}

// Without its trial file a served trial's requests are unknown: a failure naming the file.
TEST_F(IngestTrialTest, AServedTrialWithoutItsTrialFileIsAFailureNamingIt) {
  const TrialConfig config = test::TinyServedTrial(4, 2);
  RankResult leader;
  leader.device = "cpu";
  WriteRank(leader);
  const TrialRecord r = IngestTrial(config, "k", dir_.path(), Outcome({{true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("the trial's requests cannot be read"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(kTrialFileName), std::string::npos) << r.error;
}

// The output is read later, for the output error; a file that lies fails the trial now.
TEST_F(IngestTrialTest, AnOutputFileThatIsNotItsClaimedArrayIsAFailure) {
  WriteRank(Rank(0, {10, 11}));
  WriteRank(Rank(1, {12, 13}));
  const float values[2] = {1, 2};
  WriteNpy(dir_.path() / kOutputFileName, {2}, values);
  EXPECT_EQ(IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}})).status,
            TrialStatus::kOk);
  WriteNpy(dir_.path() / kOutputFileName, {2}, values);
  std::filesystem::resize_file(dir_.path() / kOutputFileName,
                               std::filesystem::file_size(dir_.path() / kOutputFileName) - 4);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("bad final output: "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("output.npy: the header's shape (2) does not match the 4 bytes"),
            std::string::npos)
      << r.error;
}

// A rank may replace its log by a FIFO; reading the log for an error never blocks.
TEST_F(IngestTrialTest, ALogThatIsAFifoIsNoLog) {
  ASSERT_EQ(::mkfifo(RankLogPath(dir_.path(), 0).c_str(), 0644), 0);
  EXPECT_EQ(LogTail(RankLogPath(dir_.path(), 0)), "(no log)");
  EXPECT_EQ(LastLogLine(RankLogPath(dir_.path(), 0)), "");
}

// A log that is a link out of the run folder is no log: its lines never reach an error.
TEST_F(IngestTrialTest, ALogThatLinksOutOfTheRunFolderIsNoLog) {
  test::TempDir elsewhere;
  std::ofstream(elsewhere / "private.txt") << "password=hunter2\n";
  std::filesystem::create_symlink(elsewhere / "private.txt", RankLogPath(dir_.path(), 0));
  EXPECT_EQ(LogTail(RankLogPath(dir_.path(), 0)), "(no log)");
  EXPECT_EQ(LastLogLine(RankLogPath(dir_.path(), 0)), "");
}

TEST_F(IngestTrialTest, ARankFileThatIsALinkIsAFailureNamingIt) {
  test::TempDir elsewhere;
  WriteFileAtomically(elsewhere / "rank0.json", ToJson(Rank(0, {10, 11})).dump());
  std::filesystem::create_symlink(elsewhere / "rank0.json", RankResultPath(dir_.path(), 0));
  WriteRank(Rank(1, {12, 13}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("rank0.json: is a symbolic link"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, AnOutputThatLinksOutOfTheRunFolderIsAFailure) {
  WriteRank(Rank(0, {10, 11}));
  WriteRank(Rank(1, {12, 13}));
  test::TempDir elsewhere;
  const float values[2] = {1, 2};
  WriteNpy(elsewhere / kOutputFileName, {2}, values);
  std::filesystem::create_symlink(elsewhere / kOutputFileName, dir_.path() / kOutputFileName);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("output.npy: is a symbolic link"), std::string::npos) << r.error;
}

// Only the end of a long log is read: its last lines, the first (cut) line of the end dropped.
TEST_F(IngestTrialTest, ALongLogIsReadFromItsEnd) {
  {
    std::ofstream log(RankLogPath(dir_.path(), 0));
    for (int i = 0; i < 100000; ++i) log << "line " << i << "\n";
  }
  EXPECT_EQ(LastLogLine(RankLogPath(dir_.path(), 0)), "line 99999");
  EXPECT_EQ(LogTail(RankLogPath(dir_.path(), 0), 2), "line 99998 | line 99999");
}

// A server's or program's log holds any bytes (a progress bar's block characters, raw bytes):
// its tail and last line are valid UTF-8 however their lines are cut, so an error that quotes
// them can be written to a rank file and stored (nlohmann refuses to write invalid UTF-8).
TEST_F(IngestTrialTest, ALogsTailIsValidUtf8WhereverItIsCut) {
  std::string bar;
  for (int i = 0; i < 200; ++i) bar += "\u2588";  // "█": 3 bytes, cut at 300 and 500 bytes
  {
    std::ofstream log(RankLogPath(dir_.path(), 0), std::ios::binary);
    log << "raw \xff\xfe bytes\n" << std::string(299, 'x') << bar << "\n" << bar << "\n";
  }
  const std::string tail = LogTail(RankLogPath(dir_.path(), 0));
  EXPECT_FALSE(FirstInvalidUtf8(tail)) << tail;
  EXPECT_NE(tail.find("raw \ufffd"), std::string::npos) << tail;
  EXPECT_NE(tail.find(std::string(299, 'x') + "..."), std::string::npos) << tail;
  const std::string last = LastLogLine(RankLogPath(dir_.path(), 0));
  EXPECT_FALSE(FirstInvalidUtf8(last)) << last;
  EXPECT_EQ(last.size(), 498u + 3u);  // 166 whole characters of the 500 bytes, then "..."
}

TEST_F(IngestTrialTest, TimeoutIsRecorded) {
  LaunchOutcome o = Outcome({{true, 0, SIGKILL, true}, {true, 0, SIGKILL, true}});
  o.timed_out = true;
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), o);
  EXPECT_EQ(r.status, TrialStatus::kTimeout);
}

// An interrupt while a large rank file is read ends the read: the trial is not ok (the sweep
// loop records it as interrupted), and the same files read without one make an ok trial.
TEST_F(IngestTrialTest, AnInterruptWhileRankFilesAreReadLeavesTheTrialNotOk) {
  RankResult big = Rank(0, {10, 11});
  for (int i = 0; i < 20000; ++i) big.samples.push_back({0, 2 + i, "stage:x", 1.0, true});
  WriteRank(big);
  WriteRank(Rank(1, {10, 11}));
  int asked = 0;
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}),
                       [&] { return ++asked > 0; });
  EXPECT_NE(r.status, TrialStatus::kOk);
  EXPECT_NE(r.error.find("reading was interrupted"), std::string::npos) << r.error;
  EXPECT_GT(asked, 0);
  EXPECT_EQ(IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}})).status,
            TrialStatus::kOk);
}

// A field the contract does not know holding a million empty objects (3 MB: the file that kept
// ingest busy for hours) is read once and dropped; the trial is recorded from the known fields.
TEST_F(IngestTrialTest, AMillionValuesInAnUnknownFieldAreReadOnceAndDropped) {
  WriteRank(Rank(1, {10, 11}));
  nlohmann::json rank0 = ToJson(Rank(0, {10, 11}));
  std::string text = rank0.dump();
  text.pop_back();  // the closing brace
  text += ", \"padding\": [";
  for (int i = 0; i < 1'000'000; ++i) text += i ? ",{}" : "{}";
  text += "]}";
  WriteFileAtomically(RankResultPath(dir_.path(), 0), text);
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kOk) << r.error;
}

}  // namespace
}  // namespace ditbench::ingest_test
