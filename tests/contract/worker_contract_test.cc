#include "contract/worker_contract.h"

#include <sys/stat.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/atomic_file.h"
#include "base/untrusted_input.h"
#include "tests/support/temp_dir.h"

namespace ditbench::worker_contract_test {
namespace {

class WorkerContractTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
};

TEST_F(WorkerContractTest, RankResultRoundTripsEveryField) {
  RankResult r;
  r.rank = 1;
  r.world_size = 2;
  r.status = "ok";
  r.device = "NVIDIA H100 80GB HBM3";
  r.backend = "nccl";
  r.stop_reason = "target_rel_ci";
  r.samples = {{1, 0, "iteration", 12.5, true},
               {1, 1, "step:0/block:3", 0.25, false},
               {1, 1, "step:1", 0.5, false, /*reused=*/true}};
  r.peak_mem_mb = 1234.5;
  r.peak_reserved_mb = 2048;
  r.environment = {{"libtorch", "2.11.0"}};
  r.clocks = {{"available", true}, {"throttled", true}, {"sm_mhz_min", 1410.0}};
  r.steps = {
      {0, "cudnn", "bf16"}, {1, "flash+math", "fp8_rowwise"}, {2, "", "bf16", false, /*expert=*/1}};
  r.latent_shape = {1, 16, 21, 60, 104};
  r.requests = {{3, 0, 1, 10.5, 12.0, 400.25, 380.0},
                {4, 0, 1, 11.0, 400.25, 790.0, 380.0, false, /*failed=*/true}};
  r.serve_start_monotonic_s = 81234.5625;
  WriteFileAtomically(RankResultPath(dir_.path(), 1), ToJson(r).dump());
  EXPECT_FALSE(std::filesystem::exists(RankResultPath(dir_.path(), 1).string() + ".tmp"));

  RankResult back = ReadRankResult(RankResultPath(dir_.path(), 1));
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.backend, "nccl");
  EXPECT_EQ(back.stop_reason, "target_rel_ci");
  ASSERT_EQ(back.samples.size(), 3u);
  EXPECT_EQ(back.samples[1].stage, "step:0/block:3");
  EXPECT_EQ(back.samples[1].rank, 1);
  EXPECT_TRUE(back.samples[0].warmup);
  EXPECT_FALSE(back.samples[1].reused);
  EXPECT_TRUE(back.samples[2].reused);
  // Written only where set: a rank file without `cache` is as before.
  EXPECT_FALSE(ToJson(r)["samples"][1].contains("reused"));
  EXPECT_FALSE(ToJson(r)["steps"][1].contains("expert"));  // a model of experts' steps only
  EXPECT_EQ(ToJson(r)["steps"][2]["expert"], 1);
  EXPECT_DOUBLE_EQ(*back.peak_reserved_mb, 2048);
  EXPECT_EQ(back.environment, r.environment);
  EXPECT_EQ(back.clocks, r.clocks);
  EXPECT_EQ(back.steps, r.steps);
  EXPECT_EQ(back.latent_shape, r.latent_shape);
  EXPECT_EQ(back.requests, r.requests);
  EXPECT_FALSE(ToJson(RankResult{}).contains("requests"));  // a trial that does not serve
  EXPECT_EQ(back.serve_start_monotonic_s, r.serve_start_monotonic_s);
  EXPECT_FALSE(ToJson(RankResult{}).contains("serve_start_monotonic_s"));
}

TEST_F(WorkerContractTest, TrialFileRoundTripsTheConfig) {
  TrialFile t{"abc", "s", TrialConfig{}, "cuda", {}};
  t.config.ulysses = 4;
  t.config.model_overrides = {{"depth", 2}};
  t.config.pipefusion_patches = 1;  // stored as the effective number
  WriteFileAtomically(dir_ / "trial.json", ToJson(t).dump());
  TrialFile back = ReadTrialFile(dir_ / "trial.json");
  EXPECT_EQ(back.config, t.config);
  EXPECT_EQ(back.device, "cuda");
  EXPECT_EQ(back.trial_key, "abc");
}

TEST_F(WorkerContractTest, NewerVersionAndOtherFormatsAreRefusedWithThePath) {
  auto j = ToJson(RankResult{});
  j["version"] = kContractVersion + 1;
  std::ofstream(dir_ / "rank0.json") << j.dump();
  try {
    ReadRankResult(dir_ / "rank0.json");
    FAIL() << "a newer version was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank0.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ / "trial.json") << ToJson(RankResult{}).dump();
  EXPECT_THROW(ReadTrialFile(dir_ / "trial.json"), std::runtime_error);  // a rank file, not a trial
}

// A valid rank file with one warm-up and two timed iterations, as JSON to break.
nlohmann::json ValidRankFile() {
  RankResult r;
  r.samples = {{0, 0, "iteration", 5, true}, {0, 1, "iteration", 1.5, false},
               {0, 1, "step:0", 0.0, false}, {0, 2, "iteration", 1.25, false}};
  return ToJson(r);
}

// What ReadRankResult says about `j` written to rank0.json, or "" when it reads it.
std::string Refusal(const std::filesystem::path& dir, const std::string& text) {
  std::ofstream(dir / "rank0.json") << text;
  try {
    ReadRankResult(dir / "rank0.json");
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// The smallest double (a denormal) is no iteration time: below 1 ns the file is refused, so
// the trial fails with the reason instead of being stored as ok.
TEST_F(WorkerContractTest, AnIterationFasterThanOneNanosecondIsRefused) {
  nlohmann::json j = ValidRankFile();
  j["samples"][1]["ms"] = 4.9e-324;
  EXPECT_NE(Refusal(dir_.path(), j.dump())
                .find("'samples[1].ms' is 5e-324; expected milliseconds from 1e-06 (1 ns: no "
                      "real iteration is faster)"),
            std::string::npos)
      << Refusal(dir_.path(), j.dump());
  j["samples"][1]["ms"] = kMinIterationMs;
  EXPECT_EQ(Refusal(dir_.path(), j.dump()), "");
  j["samples"][2]["ms"] = 4.9e-324;  // a stage within an iteration may take no time
  EXPECT_EQ(Refusal(dir_.path(), j.dump()), "");
}

TEST_F(WorkerContractTest, EveryNumberOutOfRangeIsRefusedNamingTheField) {
  EXPECT_EQ(Refusal(dir_.path(), ValidRankFile().dump()), "");  // a stage may take 0 ms
  struct Case {
    const char* pointer;  // the field to set, as a JSON pointer
    nlohmann::json value;
    const char* said;
  };
  const Case cases[] = {
      {"/samples/1/iteration", -1, "'samples[1].iteration' is -1; expected an integer from 0 to"},
      {"/samples/1/iteration", 3000000000u, "'samples[1].iteration' is 3000000000;"},
      {"/samples/1/iteration", 1e300, "'samples[1].iteration' is 1e+300;"},
      {"/samples/1/iteration", 1.5, "'samples[1].iteration' is 1.5;"},
      {"/samples/1/ms", -6.0, "'samples[1].ms' is -6.0; expected milliseconds from 1e-06"},
      {"/samples/1/ms", 0.0, "'samples[1].ms' is 0.0;"},
      {"/samples/1/ms", 1e308, "'samples[1].ms' is 1e+308;"},
      {"/samples/2/ms", -1.0, "'samples[2].ms' is -1.0; expected milliseconds from 0"},
      {"/samples/1/ms", "1.5", "'samples[1].ms' is \"1.5\";"},
      {"/samples/1/warmup", 0, "'samples[1].warmup' is 0; expected true or false"},
      {"/samples/1/stage", "", "'samples[1].stage' is \"\"; expected a stage name"},
      {"/samples/2/reused", "yes", "'samples[2].reused' is \"yes\"; expected true or false"},
      {"/samples/1/reused", true,
       "'samples[1].reused' is true; expected false on stage 'iteration' (only a \"step:i\" "
       "sample is reused)"},
      {"/samples/3/iteration", 1,
       "'samples[3].iteration' is 1; expected one 'iteration' sample "
       "per iteration; iteration 1 has two"},
      {"/samples", nlohmann::json::object(), "'samples' is {}; expected an array"},
      {"/rank", -1, "'rank' is -1; expected an integer from 0 to 65535"},
      {"/world_size", 0, "'world_size' is 0; expected an integer from 1 to 65536"},
      {"/world_size", 3000000000u, "'world_size' is 3000000000;"},
      {"/status", 7, "'status' is 7; expected a string"},
      {"/peak_mem_mb", -1.0, "'peak_mem_mb' is -1.0; expected a number from 0 to 1e+09"},
      {"/comm_bytes_per_step", "many", "'comm_bytes_per_step' is \"many\";"},
      {"/environment", nlohmann::json::array(), "'environment' is []; expected an object"},
      {"/clocks", nlohmann::json{{"available", "yes"}}, "'clocks.available' is \"yes\";"},
      {"/clocks", nlohmann::json{{"sm_mhz_min", "fast"}}, "'clocks.sm_mhz_min' is \"fast\";"},
      {"/metrics", nlohmann::json{{"items", "x"}}, "'metrics.items' is \"x\"; expected a number"},
      {"/steps", nlohmann::json::object(), "'steps' is {}; expected a list of at most 100000"},
      {"/steps", nlohmann::json::array({{{"step", 1}, {"attention", "math"}, {"linear", "bf16"}}}),
       "'steps[0]' is {\"attention\":\"math\",\"linear\":\"bf16\",\"step\":1}; expected "
       "{\"step\": 0,"},
      {"/steps",
       nlohmann::json::array({{{"step", 0}, {"attention", "\u001b[31mred"}, {"linear", "bf16"}}}),
       "'steps[0].attention' is \"\\u001b[31mred\"; expected a name of at most 64 characters"},
      {"/steps", nlohmann::json::array({{{"step", 0}, {"attention", "math"}}}),
       "'steps[0].linear' is missing or null;"},
      {"/steps",
       nlohmann::json::array(
           {{{"step", 0}, {"attention", "math"}, {"linear", "bf16"}, {"expert", -1}}}),
       "'steps[0].expert' is -1; expected an expert's index, 0 to 15"},
      {"/steps",
       nlohmann::json::array(
           {{{"step", 0}, {"attention", "math"}, {"linear", "bf16"}, {"expert", 16}}}),
       "'steps[0].expert' is 16;"},
      {"/steps",
       nlohmann::json::array(
           {{{"step", 0}, {"attention", "math"}, {"linear", "bf16"}, {"expert", "high"}}}),
       "'steps[0].expert' is \"high\";"},
      {"/latent_shape", nlohmann::json::array({1, 4, 32}),
       "'latent_shape' is [1,4,32]; expected a list of 4 or 5 sizes from 1 to 2147483647"},
      {"/latent_shape", nlohmann::json::array({1, 4, 0, 32}), "'latent_shape' is [1,4,0,32];"},
      {"/latent_shape", nlohmann::json::array({1, 4, 32, 3000000000u}),
       "'latent_shape' is [1,4,32,3000000000];"},
      {"/latent_shape", "1x4x32x32", "'latent_shape' is \"1x4x32x32\";"},
      {"/requests", nlohmann::json::object(), "'requests' is {}; expected a list of at most"},
      {"/requests", nlohmann::json::parse(R"([{"index": -1, "shape": 0, "replica": 0}])"),
       "'requests[0].index' is -1; expected an integer from 0 to 999999"},
      {"/requests",
       nlohmann::json::parse(R"([{"index": 0, "shape": 0, "replica": 0, "arrival_ms": 0,
                                  "start_ms": 1e300, "end_ms": 2, "isolated_ms": 1}])"),
       "'requests[0].start_ms' is 1e+300; expected ms from 0 to 1e+09"},
      {"/requests",
       nlohmann::json::parse(R"([{"index": 0, "shape": 0, "replica": 0, "arrival_ms": 0,
                                  "start_ms": 1, "end_ms": 2}])"),
       "'requests[0].isolated_ms' is missing or null; expected ms from 1e-06 to 1e+09"},
      {"/requests",
       nlohmann::json::parse(R"([{"index": 0, "shape": 0, "replica": 0, "arrival_ms": 0,
                                  "start_ms": 1, "end_ms": 2, "isolated_ms": 1,
                                  "failed": 1}])"),
       "'requests[0].failed' is 1; expected true or false"},
      {"/serve_start_monotonic_s", -0.5,
       "'serve_start_monotonic_s' is -0.5; expected a number from 0 to 1e+09"},
      {"/serve_start_monotonic_s", 1e300, "'serve_start_monotonic_s' is 1e+300;"},
      {"/serve_start_monotonic_s", "12.5", "'serve_start_monotonic_s' is \"12.5\";"},
      {"/serve_start_monotonic_s", true, "'serve_start_monotonic_s' is true;"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = ValidRankFile();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const std::string refusal = Refusal(dir_.path(), j.dump());
    EXPECT_NE(refusal.find("rank0.json: " + std::string(c.said)), std::string::npos)
        << c.pointer << " = " << c.value.dump() << ": " << refusal;
  }
}

// A request's isolated latency is the SLO's unit (latency <= slo_scale x isolated_ms): 0 would
// make every request miss it, and a denormal is no latency a model has.
TEST_F(WorkerContractTest, ARequestsIsolatedLatencyOfZeroIsRefused) {
  for (const double isolated : {0.0, 1e-300, 5e-7}) {
    nlohmann::json j = ValidRankFile();
    j["requests"] = {{{"index", 0},
                      {"shape", 0},
                      {"replica", 0},
                      {"arrival_ms", 0},
                      {"start_ms", 1},
                      {"end_ms", 2},
                      {"isolated_ms", isolated}}};
    const std::string refusal = Refusal(dir_.path(), j.dump());
    EXPECT_NE(refusal.find(fmt::format("rank0.json: 'requests[0].isolated_ms' is {}; expected ms "
                                       "from 1e-06 to 1e+09",
                                       nlohmann::json(isolated).dump())),
              std::string::npos)
        << refusal;
  }
  nlohmann::json j = ValidRankFile();
  j["requests"] = {{{"index", 0},
                    {"shape", 0},
                    {"replica", 0},
                    {"arrival_ms", 0},
                    {"start_ms", 1},
                    {"end_ms", 2},
                    {"isolated_ms", 1e-6}}};
  EXPECT_EQ(Refusal(dir_.path(), j.dump()), "");
}

// ditbench_result.metric(name, value, unit=..., better=...): a number with its declaration,
// beside plain numbers; read as written (checked later, metrics/metric_table.h) and written back.
TEST_F(WorkerContractTest, AMetricMayDeclareItsUnitAndBetterDirection) {
  nlohmann::json j = ValidRankFile();
  j["metrics"] = {{"items", 3.0},
                  {"throughput", {{"value", 2.5}, {"unit", "images/s"}, {"better", "higher"}}}};
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  const RankResult back = ReadRankResult(dir_ / "rank0.json");
  EXPECT_EQ(back.metrics, (std::map<std::string, double>{{"items", 3.0}, {"throughput", 2.5}}));
  ASSERT_TRUE(back.metric_declarations.contains("throughput"));
  EXPECT_EQ(back.metric_declarations.at("throughput").unit, "images/s");
  EXPECT_EQ(back.metric_declarations.at("throughput").better, "higher");
  EXPECT_EQ(ToJson(back)["metrics"], j["metrics"]);

  j["metrics"] = {{"throughput", {{"unit", "images/s"}}}};
  EXPECT_NE(Refusal(dir_.path(), j.dump()).find("'metrics.throughput.value'"), std::string::npos);
  j["metrics"] = {{"throughput", {{"value", 1.0}, {"better", 1}}}};
  EXPECT_NE(Refusal(dir_.path(), j.dump()).find("'metrics.throughput.better' is 1; expected text"),
            std::string::npos)
      << Refusal(dir_.path(), j.dump());
}

TEST_F(WorkerContractTest, EnergyRoundTripsAndAnUnavailableCounterKeepsItsReason) {
  nlohmann::json j = ValidRankFile();
  j["energy"] = {{"joules", 1.5}, {"window_ms", 3.0}};  // 500 W over the 2.75 ms timed
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  RankResult back = ReadRankResult(dir_ / "rank0.json");
  ASSERT_TRUE(back.energy.has_value());
  EXPECT_DOUBLE_EQ(back.energy->joules, 1.5);
  EXPECT_DOUBLE_EQ(back.energy->window_ms, 3.0);
  EXPECT_EQ(ToJson(back)["energy"], j["energy"]);

  j["energy"] = {{"unavailable", "no counter here"}};
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  back = ReadRankResult(dir_ / "rank0.json");
  EXPECT_FALSE(back.energy.has_value());
  EXPECT_EQ(back.energy_unavailable, "no counter here");
  EXPECT_EQ(ToJson(back)["energy"], j["energy"]);

  j.erase("energy");  // older workers and CPU ranks write none
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  back = ReadRankResult(dir_ / "rank0.json");
  EXPECT_FALSE(back.energy.has_value());
  EXPECT_TRUE(back.energy_unavailable.empty());
  EXPECT_FALSE(ToJson(back).contains("energy"));
}

TEST_F(WorkerContractTest, NegativeNonFiniteOrAbsurdEnergyIsRefusedNamingTheField) {
  struct Case {
    nlohmann::json energy;
    const char* said;
  };
  const Case cases[] = {
      {{{"joules", -1.0}, {"window_ms", 3.0}},
       "'energy.joules' is -1.0; expected a finite number of joules from 0"},
      {{{"joules", "1"}, {"window_ms", 3.0}}, "'energy.joules' is \"1\";"},
      {{{"window_ms", 3.0}}, "'energy.joules' is missing or null;"},
      {{{"joules", 1.0}, {"window_ms", 0.0}},
       "'energy.window_ms' is 0.0; expected milliseconds above 0 and at most"},
      {{{"joules", 1.0}, {"window_ms", 1e300}}, "'energy.window_ms' is 1e+300;"},
      // A window shorter than the 2.75 ms of timed iterations it claims to cover.
      {{{"joules", 1.0}, {"window_ms", 1.0}},
       "'energy.window_ms' is 1.0; expected at least the 2.75 ms of timed iterations"},
      // 1 MJ in 3 ms: 333 MW.
      {{{"joules", 1e6}, {"window_ms", 3.0}},
       "'energy.joules' is 1000000.0; expected at most 5000 W on average over the 3 ms "
       "window (that is 333333333 W)"},
      {{{"unavailable", ""}}, "'energy.unavailable' is \"\"; expected a reason"},
      {{{"unavailable", "none"}, {"joules", 1.0}}, "'energy.unavailable' is \"none\";"},
      {nlohmann::json::array(), "'energy' is []; expected an object"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = ValidRankFile();
    j["energy"] = c.energy;
    const std::string refusal = Refusal(dir_.path(), j.dump());
    EXPECT_NE(refusal.find("rank0.json: " + std::string(c.said)), std::string::npos)
        << c.energy.dump() << ": " << refusal;
  }
  // Not a finite number: JSON has no NaN or infinity, and a literal too large for a double
  // is refused by the parser; either way the file is named.
  const std::string text = ValidRankFile().dump();
  for (const char* joules : {"1e999", "NaN", "Infinity"}) {
    const std::string bad = text.substr(0, text.rfind('}')) + R"(,"energy":{"joules":)" +
                            joules + R"(,"window_ms":3.0}})";
    EXPECT_NE(Refusal(dir_.path(), bad).find("rank0.json"), std::string::npos) << joules;
  }
}

// nlohmann::json parses iteratively but copies and dumps recursively, and SQLite refuses JSON
// nested 1,000 deep: nesting is refused while parsing, before any value is built.
// A serving rank's load start on the host's monotonic clock: optional (older workers and
// programs write none), and, as untrusted input, a finite number from 0 or the file is refused.
TEST_F(WorkerContractTest, ALoadsMonotonicStartIsOptionalAndOnlyAFiniteNumberFromZero) {
  nlohmann::json j = ValidRankFile();
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  EXPECT_FALSE(ReadRankResult(dir_ / "rank0.json").serve_start_monotonic_s);
  j["serve_start_monotonic_s"] = nullptr;
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  EXPECT_FALSE(ReadRankResult(dir_ / "rank0.json").serve_start_monotonic_s);
  j["serve_start_monotonic_s"] = 0;
  ASSERT_EQ(Refusal(dir_.path(), j.dump()), "");
  EXPECT_EQ(ReadRankResult(dir_ / "rank0.json").serve_start_monotonic_s, 0.0);
  const std::string text = ValidRankFile().dump();
  for (const char* start : {"1e999", "-1e999", "NaN", "Infinity"}) {
    const std::string bad =
        text.substr(0, text.rfind('}')) + R"(,"serve_start_monotonic_s":)" + start + "}";
    EXPECT_NE(Refusal(dir_.path(), bad).find("rank0.json"), std::string::npos) << start;
  }
}

TEST_F(WorkerContractTest, JsonNestedTooDeepIsRefusedNamingTheTopLevelField) {
  auto nested = [](int depth) {  // the environment holds `depth` more levels
    nlohmann::json j = ValidRankFile();
    std::string text = j.dump();
    const std::string deep = "{\"deep\": " + std::string(depth - 1, '[') +
                             std::string(depth - 1, ']') + "}";
    text.replace(text.find("\"environment\":{}"), 16, "\"environment\":" + deep);
    return text;
  };
  EXPECT_EQ(Refusal(dir_.path(), nested(kMaxJsonDepth - 1)), "");  // 1 + 31 levels
  for (int depth : {kMaxJsonDepth, 3000, 100000}) {
    const std::string refusal = Refusal(dir_.path(), nested(depth));
    EXPECT_NE(refusal.find("rank0.json: 'environment' is nested more than 32 levels deep"),
              std::string::npos)
        << depth << ": " << refusal;
  }
  const std::string top = Refusal(dir_.path(), std::string(100000, '['));
  EXPECT_NE(top.find("rank0.json: JSON nested more than 32 levels deep"), std::string::npos)
      << top;
}

TEST_F(WorkerContractTest, ARankFileThatIsAFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "rank0.json").c_str(), 0644), 0);
  try {
    ReadRankResult(dir_ / "rank0.json");
    FAIL() << "a FIFO was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank0.json: is a FIFO"), std::string::npos) << e.what();
  }
}

// Counts are capped as the file is read: a rank file of more values than kMaxRankFileValues is
// refused naming the field, before the rest is built.
TEST_F(WorkerContractTest, ARankFileOfTooManyValuesIsRefusedNamingTheField) {
  std::string text = ValidRankFile().dump();
  text.pop_back();
  text += ", \"environment\": {\"x\": [";
  for (std::uint64_t i = 0; i <= kMaxRankFileValues; ++i) text += i ? ",0" : "0";
  text += "]}}";
  EXPECT_EQ(Refusal(dir_.path(), text),
            (dir_ / "rank0.json").string() + ": 'environment' holds more than " +
                std::to_string(kMaxRankFileValues) + " JSON values; expected at most " +
                std::to_string(kMaxRankFileValues));
}

// A serving load is held to the reader's cap before launch by counting what each request adds
// to a rank file (RankFileValuesPerRequest, experiments/serve_load.h): pinned here against the
// writer, so that a field added to a sample or a request record cannot make the count low.
TEST_F(WorkerContractTest, AServedRequestAddsTheRankFileValuesItIsCountedAt) {
  const auto values_with = [](int requests, int stages) {
    RankResult r;
    for (int i = 0; i < requests; ++i) {
      r.requests.push_back({i, 0, 0, 1.5, 2.5, 3.5, 1.0, false});
      for (const char* stage : {kIterationStage, "queue", "service"})
        r.samples.push_back({0, i, stage, 1.25, false});
      for (int s = 0; s < stages; ++s)
        r.samples.push_back(
            {0, i, s + 1 < stages ? fmt::format("step:{}", s) : "decode", 0.5, i == 0});
    }
    JsonLimits limits;
    limits.max_values = kMaxRankFileValues;
    JsonReadStats stats;
    ParseBoundedJson(ToJson(r).dump(), limits, "rank file", &stats);
    return stats.values;
  };
  for (int stages : {1, 3, 51}) {
    const std::uint64_t one = values_with(1, stages), three = values_with(3, stages);
    EXPECT_EQ((three - one) / 2, RankFileValuesPerRequest(stages)) << stages << " stages";
    EXPECT_LE(values_with(0, 0), kRankFileOtherValues);
  }
}

}  // namespace
}  // namespace ditbench::worker_contract_test
