#include "experiments/trial.h"

#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "experiments/trial_identity.h"
#include "experiments/trial_requests.h"
#include "experiments/trial_settings.h"

namespace ditbench::trial_test {
namespace {

// Goldens of key format v2. They pin trial identity: if one changes, every stored result stops
// matching its trial. Change them only on purpose, with a note in docs/sweep-spec.md. (Key
// format v1 hashed the whole canonical form; v2 changed every key on purpose, and schema 2
// migrates stored keys.) The keys were computed independently:
//   python3 -c 'import hashlib; print(hashlib.sha256(b"{}").hexdigest()[:16])'
constexpr const char* kDefaultCanonical =
    R"({"batch":1,"cfg":1,"dp":1,"model":"pixart-alpha","pipefusion":1,"pipefusion_patches":1,)"
    R"("pipefusion_warmup_steps":1,"precision":"bf16","profile_blocks":false,)"
    R"("repeats":{"max":5,"max_seconds":0.0,"min":5,"target_rel_ci":0.0},"resolution":1024,)"
    R"("ring":1,"scope":"denoise","seed":0,"steps":20,"timeout_s":1800.0,"ulysses":1,"warmup":5,)"
    R"("workload":"dit"})";

TrialConfig TinyTwoRanks() {
  TrialConfig tiny;
  tiny.model = "pixart-alpha-tiny";
  tiny.resolution = 256;
  tiny.ulysses = 2;
  return tiny;
}

TEST(TrialTest, CanonicalTextIsSortedCompactAndPinned) {
  EXPECT_EQ(CanonicalText(TrialConfig{}), kDefaultCanonical);
}

TEST(TrialTest, IdentityLeavesOutDefaultsAndTheMeasurementPolicy) {
  EXPECT_EQ(IdentityText(TrialConfig{}), "{}");
  EXPECT_EQ(IdentityText(TinyTwoRanks()),
            R"({"model":"pixart-alpha-tiny","resolution":256,"ulysses":2})");
}

TEST(TrialTest, KeyIsTheSha256PrefixOfTheIdentityText) {
  EXPECT_EQ(TrialKey(TrialConfig{}), Sha256Hex("{}").substr(0, 16));
  EXPECT_EQ(TrialKey(TrialConfig{}), "44136fa355b3678a");
  EXPECT_EQ(TrialKey(TinyTwoRanks()), "00e7cab487b3857d");
}

TEST(TrialTest, Sha256MatchesAKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TrialTest, MeasurementPolicyChangesKeepTheKey) {
  const TrialConfig base = TinyTwoRanks();
  TrialConfig other = base;
  other.warmup = 50;
  EXPECT_EQ(TrialKey(other), TrialKey(base));
  other.repeats = {10, 200, 0.01, 120};
  EXPECT_EQ(TrialKey(other), TrialKey(base));
  other.timeout_s = 7200;
  EXPECT_EQ(TrialKey(other), TrialKey(base));
  other.profile_blocks = true;
  EXPECT_EQ(TrialKey(other), TrialKey(base));
  EXPECT_NE(CanonicalText(other), CanonicalText(base));  // still in trial.json
  EXPECT_EQ(PolicyJson(other)["warmup"], 50);
}

TEST(TrialTest, SeedTwinsShareTheConfigurationKeyAndNothingElseDoes) {
  TrialConfig a;
  a.model = "pixart-alpha-tiny";
  a.ulysses = 2;
  TrialConfig b = a;
  b.seed = 7;
  EXPECT_NE(TrialKey(a), TrialKey(b));
  EXPECT_EQ(ConfigurationKey(a), ConfigurationKey(b));
  EXPECT_EQ(ConfigurationKey(a), TrialKey(a));  // seed 0: the trial key itself
  TrialConfig c = b;
  c.ring = 2;
  EXPECT_NE(ConfigurationKey(c), ConfigurationKey(b));
  c = b;
  c.warmup = 9;  // the measurement policy is no part of either key
  EXPECT_EQ(ConfigurationKey(c), ConfigurationKey(b));
}

TEST(TrialTest, AFieldAtItsDefaultKeepsTheKey) {
  // `workload` joined the identity after the other fields: a computation written without it
  // (as schema-1 databases stored it) and one with its default have the same key.
  nlohmann::json computation = ComputationJson(TinyTwoRanks());
  ASSERT_EQ(computation["workload"], "dit");
  nlohmann::json before_the_field = computation;
  before_the_field.erase("workload");
  EXPECT_EQ(KeyOfComputation(before_the_field), TrialKey(TinyTwoRanks()));
  // The same for every field with an identity default: written at its default, it vanishes.
  const nlohmann::json defaults = ComputationJson(TrialConfig{});
  for (const auto& [field, value] : defaults.items()) {
    nlohmann::json without = defaults;
    without.erase(field);
    EXPECT_EQ(KeyOfComputation(without), TrialKey(TrialConfig{})) << field;
  }
}

// The attention axis's default is what every earlier trial ran: its key is unchanged, and
// `auto` written out or left out is one key.
TEST(TrialTest, AutoAttentionKeepsEveryEarlierKey) {
  const TrialConfig base = TinyTwoRanks();
  nlohmann::json with_auto = ComputationJson(base);
  EXPECT_FALSE(with_auto.contains("attention"));
  with_auto["attention"] = "auto";
  EXPECT_EQ(KeyOfComputation(with_auto), TrialKey(base));
  TrialConfig math = base;
  math.attention = AttentionBackend::kMath;
  EXPECT_EQ(ComputationJson(math).at("attention"), "math");
}

// FP8 layers and per-step schedules default to what every earlier trial ran: no key changes.
// quant_exclude names layers only with a quantization, so without one it changes nothing.
TEST(TrialTest, QuantAndScheduleDefaultsKeepEveryEarlierKey) {
  const TrialConfig base = TinyTwoRanks();
  nlohmann::json written = ComputationJson(base);
  for (const char* field : {"quant", "quant_exclude", "schedule"})
    EXPECT_FALSE(written.contains(field)) << field;
  written["quant"] = "none";
  written["quant_exclude"] = nlohmann::json::array();
  written["schedule"] = nlohmann::json::object();
  EXPECT_EQ(KeyOfComputation(written), TrialKey(base));
  TrialConfig excluded = base;
  excluded.quant_exclude = {"blocks.*.fc2"};
  EXPECT_EQ(TrialKey(excluded), TrialKey(base));

  TrialConfig fp8 = base;
  fp8.quant = Quantization::kFp8Rowwise;
  fp8.quant_exclude = {"blocks.*.fc2"};
  fp8.attention = AttentionBackend::kFlash;
  fp8.schedule = {2, 1};
  const nlohmann::json computation = ComputationJson(fp8);
  EXPECT_EQ(computation.at("quant"), "fp8_rowwise");
  EXPECT_EQ(computation.at("quant_exclude"), nlohmann::json::array({"blocks.*.fc2"}));
  EXPECT_EQ(computation.at("schedule"),
            nlohmann::json({{"high_precision_first", 2}, {"high_precision_last", 1}}));
  const TrialConfig read = TrialConfigFromJson(CanonicalJson(fp8));
  EXPECT_EQ(read.quant, fp8.quant);
  EXPECT_EQ(read.quant_exclude, fp8.quant_exclude);
  EXPECT_EQ(read.schedule, fp8.schedule);
  EXPECT_EQ(CanonicalJson(read), CanonicalJson(fp8));
  EXPECT_NE(TrialKey(fp8), TrialKey(base));
}

// Step caching defaults to none: no key changes; a cache is in the key with its parameters.
TEST(TrialTest, ACacheIsInTheKeyAndNoneKeepsEveryEarlierKey) {
  const TrialConfig base = TinyTwoRanks();
  nlohmann::json written = ComputationJson(base);
  EXPECT_FALSE(written.contains("cache"));
  written["cache"] = "none";
  EXPECT_EQ(KeyOfComputation(written), TrialKey(base));
  TrialConfig cached = base;
  cached.cache = {StepCache::Kind::kFbCache, 0.08, 2};
  EXPECT_EQ(ComputationJson(cached).at("cache"),
            nlohmann::json({{"kind", "fbcache"}, {"threshold", 0.08}, {"warmup_steps", 2}}));
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(cached)).cache, cached.cache);
  TrialConfig looser = cached;
  looser.cache.threshold = 0.2;
  EXPECT_NE(TrialKey(looser), TrialKey(cached));
  EXPECT_NE(TrialKey(cached), TrialKey(base));
  std::string expected;
  TrialConfig scratch;
  // A typo is named, with the word it may have meant.
  EXPECT_FALSE(ApplySetting(scratch, "cache", {{"kind", "fbcache"}, {"treshold", 0.1}}, &expected));
  EXPECT_EQ(expected,
            "cache keys kind, threshold, warmup_steps, not 'treshold' (did you mean 'threshold'?)");
  EXPECT_FALSE(ApplySetting(scratch, "cache", {{"kind", "fbcahce"}}, &expected));
  EXPECT_EQ(expected,
            "a cache kind of fbcache, teacache, none, not 'fbcahce' (did you mean 'fbcache'?)");
  EXPECT_FALSE(ApplySetting(scratch, "cache", {{"kind", "magcache"}}, &expected));
  EXPECT_EQ(expected.rfind("a cache kind of fbcache, teacache, none, not 'magcache'", 0), 0u);
  EXPECT_FALSE(ApplySetting(scratch, "cache", {{"kind", "fbcache"}, {"threshold", -1}}, &expected));
  EXPECT_EQ(expected, "a cache threshold from 0 to 10 (a relative change)");
  EXPECT_FALSE(ApplySetting(scratch, "cache", {{"threshold", 0.1}}, &expected));
  EXPECT_EQ(expected, kStepCacheExpected);  // no kind at all
  EXPECT_TRUE(ApplySetting(scratch, "cache", "none", &expected));
  EXPECT_TRUE(scratch.cache.empty());
}

// Serving under load defaults to none: no key changes; a load is in the key with what the sweep
// set of it, round-trips, and takes the trial's shape, dp groups and seed.
TEST(TrialTest, AServeLoadIsInTheKeyAndNoneKeepsEveryEarlierKey) {
  const TrialConfig base = TinyTwoRanks();
  nlohmann::json written = ComputationJson(base);
  EXPECT_FALSE(written.contains("serve"));
  written["serve"] = "none";
  EXPECT_EQ(KeyOfComputation(written), TrialKey(base));
  TrialConfig served = base;
  std::string expected;
  ASSERT_TRUE(ApplySetting(served, "serve",
                           {{"rate", 2.5}, {"requests", 40}, {"warmup_requests", 2}}, &expected))
      << expected;
  EXPECT_EQ(ComputationJson(served).at("serve"), nlohmann::json({{"arrivals", "poisson"},
                                                                 {"rate", 2.5},
                                                                 {"requests", 40},
                                                                 {"slo_scale", 5.0},
                                                                 {"warmup_requests", 2}}));
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(served)).serve, served.serve);
  TrialConfig faster = served;
  faster.serve->rate_per_s = 5;
  EXPECT_NE(TrialKey(faster), TrialKey(served));
  EXPECT_NE(TrialKey(served), TrialKey(base));
  served.dp = 2;
  served.seed = 7;
  const ServeLoad load = TrialServeLoad(served);
  EXPECT_EQ(load.replicas, 2);
  EXPECT_EQ(load.seed, 7u);
  ASSERT_EQ(load.mix.size(), 1u);
  EXPECT_EQ(load.mix[0], (RequestShape{served.resolution, served.resolution, 0, served.steps}));

  // A mix: in the key as written, each entry's missing fields the trial's.
  TrialConfig mixed = base;
  ASSERT_TRUE(ApplySetting(mixed, "serve",
                           {{"rate", 2.5},
                            {"requests", 40},
                            {"mix",
                             {{{"weight", 3}},
                              {{"resolution", "512x384"}, {"steps", 8}},
                              {{"resolution", 128}, {"weight", 0.5}}}}},
                           &expected))
      << expected;
  EXPECT_EQ(ComputationJson(mixed).at("serve").at("mix"),
            nlohmann::json::parse(R"([{"weight":3.0},{"resolution":"512x384","steps":8,
                                     "weight":1.0},{"resolution":128,"weight":0.5}])"));
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(mixed)).serve, mixed.serve);
  TrialConfig stopping = served;
  ASSERT_TRUE(ApplySetting(stopping, "serve",
                           {{"rate", 2.5}, {"requests", 40}, {"early_stop", {{"percentile", 99}}}},
                           &expected))
      << expected;
  EXPECT_EQ(ComputationJson(stopping).at("serve").at("early_stop"),
            nlohmann::json({{"percentile", 99.0}, {"within", 0.1}}));
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(stopping)).serve, stopping.serve);
  EXPECT_NE(TrialKey(mixed), TrialKey(served));
  const std::vector<RequestShape> shapes = TrialShapes(mixed);
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0], (RequestShape{base.resolution, base.resolution, 0, base.steps, 3}));
  EXPECT_EQ(shapes[1], (RequestShape{512, 384, 0, 8, 1}));
  EXPECT_EQ(shapes[2], (RequestShape{128, 128, 0, base.steps, 0.5}));
  const TrialConfig alone = ShapeTrial(mixed, shapes[1]);
  EXPECT_EQ(alone.resolution_text(), "512x384");
  EXPECT_EQ(alone.steps, 8);
  EXPECT_FALSE(alone.serve);
  EXPECT_EQ(ShapeTrial(mixed, shapes[0]), [&] {
    TrialConfig own = base;
    own.serve.reset();
    return own;
  }());

  TrialConfig scratch;
  const std::pair<nlohmann::json, std::string> refused[] = {
      {{{"rate", 2}, {"requets", 10}},
       "serve keys arrivals, rate, burstiness, concurrency, requests, duration_s, "
       "warmup_requests, slo_scale, early_stop, mix, trace, points, not 'requets' (did you mean "
       "'requests'?)"},
      {{{"arrivals", "poison"}, {"rate", 2}, {"requests", 10}},
       "serve.arrivals as one of poisson, gamma, constant, trace"},
      {{{"rate", "fast"}, {"requests", 10}}, kRateExpected},
      {{{"rate", 2}, {"concurrency", 2}, {"requests", 10}},
       "serve: 'rate' is 2 and 'concurrency' 2; expected exactly one of them"},
      {{{"rate", 2}}, "serve: 'requests' and 'duration_s' are 0; expected at least one of them"},
      {{{"rate", 2}, {"requests", 10}, {"mix", nlohmann::json::array()}},
       std::string("serve.mix as a list of 1 to 16 request shapes, each ") + kMixEntryExpected},
      {{{"rate", 2}, {"requests", 10}, {"mix", {{{"resolution", 512}, {"wieght", 2}}}}},
       "serve.mix[0] keys resolution, frames, steps, weight, not 'wieght' (did you mean "
       "'weight'?)"},
      {{{"rate", 2}, {"requests", 10}, {"mix", {{{"resolution", "512x"}}}}},
       "serve.mix[0].resolution as an integer from 16 to 16384 (a square image) or "
       "WIDTHxHEIGHT such as 1280x720, each from 16 to 16384"},
      {{{"rate", 2}, {"requests", 10}, {"mix", {{{"steps", 4}}, {{"steps", 0}}}}},
       "serve.mix[1].steps as an integer from 1 to 10000"},
      {{{"rate", 2}, {"requests", 10}, {"mix", {{{"weight", 0}}}}},
       "serve.mix[0].weight as a number above 0, at most 1e9"},
      {{{"rate", 2}, {"requests", 10}, {"mix", {512}}},
       std::string("serve.mix[0] as ") + kMixEntryExpected},
      {{{"rate", 2}, {"requests", 10}, {"early_stop", {{"within", 0.1}}}}, kEarlyStopExpected},
      {{{"rate", 2}, {"requests", 10}, {"early_stop", {{"percentile", 95}, {"whithin", 0.1}}}},
       std::string(kEarlyStopExpected) + ", not 'whithin'"},
      {{{"rate", 2}, {"requests", 10}, {"early_stop", {{"percentile", 40}}}},
       "serve: 'early_stop' is percentile 40, within 0.1; expected a percentile from 50 to 99.9 "
       "and within from 0.001 to 1"},
      {{{"rate", 2}, {"requests", 10}, {"replicas", 2}},
       "no serve.replicas: a serving trial's replicas are its dp groups (set dp)"},
      {{{"rate", 2}, {"requests", 10}, {"trace", "a.csv"}},
       "serve: 'trace' is set with generated arrivals; expected arrivals: trace with a trace"},
      {nlohmann::json::object(), kServeExpected},
  };
  for (const auto& [value, said] : refused) {
    EXPECT_FALSE(ApplySetting(scratch, "serve", value, &expected)) << value.dump();
    EXPECT_EQ(expected, said) << value.dump();
  }
  EXPECT_TRUE(ApplySetting(scratch, "serve", "none", &expected));
  EXPECT_FALSE(scratch.serve);
}

TEST(TrialTest, AScheduleSaysWhichStepsRunInHighPrecision) {
  const StepSchedule schedule{2, 1};
  std::string steps;
  for (int i = 0; i < 6; ++i) steps += schedule.HighPrecision(i, 6) ? 'H' : 'l';
  EXPECT_EQ(steps, "HHlllH");
  EXPECT_TRUE(StepSchedule{}.empty());
  EXPECT_FALSE(StepSchedule{}.HighPrecision(0, 6));
}

TEST(TrialTest, ANonDefaultValueChangesTheKey) {
  const TrialConfig base = TinyTwoRanks();
  std::vector<TrialConfig> changed(17, base);
  changed[0].workload = Workload::kCommand;
  changed[1].model = "pixart-sigma";
  changed[2].model_overrides = {{"depth", 1}};
  changed[3].resolution = 512;
  changed[4].precision = Precision::kFp16;
  changed[5].scope = Scope::kForward;
  changed[6].batch = 2;
  changed[7].steps = 4;
  changed[8].seed = 1;
  changed[9].ring = 2;
  changed[10].pipefusion = 2;
  changed[11].cfg = 2;
  changed[12].dp = 2;
  changed[13].graph = GraphMode::kCudaGraph;
  changed[14].attention = AttentionBackend::kMath;
  changed[15].quant = Quantization::kFp8Tensor;
  changed[16].attention = AttentionBackend::kMath;
  changed[16].schedule = {1, 1};
  std::set<std::string> keys = {TrialKey(base)};
  for (const TrialConfig& c : changed) keys.insert(TrialKey(c));
  EXPECT_EQ(keys.size(), changed.size() + 1);  // all different from the base and each other
  TrialConfig patches = base;
  patches.pipefusion = 2;
  TrialConfig more_patches = patches;
  more_patches.pipefusion_patches = 4;
  EXPECT_NE(TrialKey(more_patches), TrialKey(patches));
  // A field this build does not know (written by a newer one) has no default: it counts.
  nlohmann::json future = ComputationJson(base);
  future["weights"] = "";
  EXPECT_NE(KeyOfComputation(future), TrialKey(base));
}

TEST(TrialTest, AFieldAddedAfterTheFormatFroze_AtItsDefault_KeepsEveryKey) {
  // pipefusion_warmup_steps arrived after key format v2 was pinned: the goldens above still hold
  // with it at its default, and only a non-default value changes a key.
  TrialConfig c = TinyTwoRanks();
  ASSERT_EQ(c.pipefusion_warmup_steps, 1);
  EXPECT_EQ(TrialKey(c), "00e7cab487b3857d");
  c.pipefusion = 2;
  const std::string pipelined = TrialKey(c);
  c.pipefusion_warmup_steps = 3;
  EXPECT_NE(TrialKey(c), pipelined);
  // A configuration stored before the field existed reads with the default.
  nlohmann::json before = CanonicalJson(TinyTwoRanks());
  before.erase("pipefusion_warmup_steps");
  EXPECT_EQ(TrialConfigFromJson(before).pipefusion_warmup_steps, 1);
  EXPECT_EQ(TrialKey(TrialConfigFromJson(before)), "00e7cab487b3857d");
}

TEST(TrialTest, WeightsFoldersAndVaeTilesKeepEveryEarlierKeyAndRoundTrip) {
  // Unset, they leave the canonical form and the key as they were before they existed.
  TrialConfig c = TinyTwoRanks();
  EXPECT_EQ(TrialKey(c), "00e7cab487b3857d");
  EXPECT_FALSE(CanonicalJson(c).contains("vae_tile"));
  EXPECT_TRUE(CanonicalJson(c)["model"].is_string());
  // Set, each is part of the identity and reads back from the stored configuration.
  c.vae_tile = 512;
  const std::string tiled = TrialKey(c);
  EXPECT_NE(tiled, "00e7cab487b3857d");
  c.weights = "/data/pixart/transformer";
  c.vae_weights = "/data/pixart/vae";
  EXPECT_NE(TrialKey(c), tiled);
  const nlohmann::json stored = CanonicalJson(c);
  EXPECT_EQ(stored["model"]["weights"], "/data/pixart/transformer");
  const TrialConfig read = TrialConfigFromJson(stored);
  EXPECT_EQ(read.weights, c.weights);
  EXPECT_EQ(read.vae_weights, c.vae_weights);
  EXPECT_EQ(read.vae_tile, 512);
  EXPECT_TRUE(read.model_overrides.empty());
  EXPECT_EQ(TrialKey(read), TrialKey(c));
}

// vae_parallel 1 (every rank decodes alone) leaves the canonical form and every key as they
// were; another value is part of the identity and reads back.
TEST(TrialTest, VaeParallelKeepsEveryEarlierKeyAndRoundTrips) {
  TrialConfig c = TinyTwoRanks();
  EXPECT_FALSE(CanonicalJson(c).contains("vae_parallel"));
  EXPECT_EQ(TrialKey(c), "00e7cab487b3857d");
  c.vae_parallel = 2;
  EXPECT_NE(TrialKey(c), "00e7cab487b3857d");
  const TrialConfig read = TrialConfigFromJson(CanonicalJson(c));
  EXPECT_EQ(read.vae_parallel, 2);
  EXPECT_EQ(TrialKey(read), TrialKey(c));
  nlohmann::json zero = CanonicalJson(c);
  zero["vae_parallel"] = 0;
  try {
    TrialConfigFromJson(zero);
    ADD_FAILURE() << "vae_parallel 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "key 'vae_parallel': expected an integer from 1 to 1024, got 0");
  }
}

// `resolution: WIDTHxHEIGHT` and `frames` (video families): a square written either way is the
// number it always was and keeps every golden key; a non-square image or a clip has its own.
TEST(TrialTest, SquaresKeepTheirKeyAndNonSquareImagesAndClipsGetTheirOwn) {
  TrialConfig c = TinyTwoRanks();
  std::string expected;
  ASSERT_TRUE(ApplySetting(c, "resolution", "256x256", &expected)) << expected;
  EXPECT_EQ(c.height, 0);
  EXPECT_EQ(TrialKey(c), "00e7cab487b3857d");
  EXPECT_EQ(CanonicalJson(c)["resolution"], 256);
  EXPECT_FALSE(CanonicalJson(c).contains("frames"));
  ASSERT_TRUE(ApplySetting(c, "resolution", "320x256", &expected)) << expected;
  EXPECT_EQ(c.resolution, 320);
  EXPECT_EQ(c.image_height(), 256);
  EXPECT_EQ(CanonicalJson(c)["resolution"], "320x256");
  EXPECT_EQ(IdentityText(c), R"({"model":"pixart-alpha-tiny","resolution":"320x256","ulysses":2})");
  ASSERT_TRUE(ApplySetting(c, "resolution", 256, &expected)) << expected;  // back to a square
  EXPECT_EQ(TrialKey(c), "00e7cab487b3857d");

  TrialConfig clip;
  clip.model = "wan2.1-t2v-tiny";
  ASSERT_TRUE(ApplySetting(clip, "resolution", "832x480", &expected)) << expected;
  ASSERT_TRUE(ApplySetting(clip, "frames", 81, &expected)) << expected;
  EXPECT_EQ(clip.image_shape(), (ImageShape{832, 480, 81}));
  EXPECT_EQ(IdentityText(clip),
            R"({"frames":81,"model":"wan2.1-t2v-tiny","resolution":"832x480"})");
  const TrialConfig read = TrialConfigFromJson(CanonicalJson(clip));
  EXPECT_EQ(read.image_shape(), clip.image_shape());
  EXPECT_EQ(CanonicalJson(read), CanonicalJson(clip));
  EXPECT_EQ(TrialKey(read), TrialKey(clip));
  // Stored before frames existed: an image.
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(TinyTwoRanks())).frames, 0);
}

TEST(TrialTest, MalformedResolutionsAndFramesSayWhatIsExpected) {
  for (const nlohmann::json& bad :
       {nlohmann::json("1280x"), nlohmann::json("x720"), nlohmann::json("1280x720x3"),
        nlohmann::json("12a0x720"), nlohmann::json("8x720"), nlohmann::json("1280X720"),
        nlohmann::json(" 1280x720"), nlohmann::json("1280x99999"), nlohmann::json(8),
        nlohmann::json(1280.5), nlohmann::json("-1280x720")}) {
    TrialConfig c;
    std::string expected;
    EXPECT_FALSE(ApplySetting(c, "resolution", bad, &expected)) << bad.dump();
    EXPECT_EQ(expected,
              "an integer from 16 to 16384 (a square image) or WIDTHxHEIGHT such as "
              "1280x720, each from 16 to 16384");
    EXPECT_EQ(c, TrialConfig{}) << bad.dump();
  }
  TrialConfig c;
  std::string expected;
  EXPECT_FALSE(ApplySetting(c, "frames", 0, &expected));
  EXPECT_EQ(expected, "an integer from 1 to 100000");
}

TEST(TrialTest, ConfigurationsWithoutWorkloadReadAsDit) {
  nlohmann::json v1 = CanonicalJson(TinyTwoRanks());
  v1.erase("workload");
  const TrialConfig read = TrialConfigFromJson(v1);
  EXPECT_EQ(read.workload, Workload::kDit);
  EXPECT_EQ(CanonicalText(read), CanonicalText(TinyTwoRanks()));
  EXPECT_EQ(TrialKey(read), TrialKey(TinyTwoRanks()));
}

// A stored or handed-over configuration names a workload ditbench knows, or it is refused:
// it is never taken for some other workload.
TEST(TrialTest, AConfigurationWithAnUnknownWorkloadIsRefused) {
  nlohmann::json config = CanonicalJson(TinyTwoRanks());
  config["workload"] = "shell";
  try {
    TrialConfigFromJson(config);
    FAIL() << "an unknown workload was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "key 'workload': expected 'dit', 'command' or 'engine', got \"shell\"");
  }
  config["workload"] = 7;
  EXPECT_THROW(TrialConfigFromJson(config), std::invalid_argument);
}

// The reader of stored and handed-over configurations is the setter table: a value the sweep
// parser refuses is refused here too, with the same expectation, and a key no configuration
// has is refused rather than dropped.
TEST(TrialTest, ReadingAConfigurationChecksEveryValueAsTheSweepParserDoes) {
  const nlohmann::json good = CanonicalJson(TinyTwoRanks());
  auto message = [&](const char* key, const nlohmann::json& value) -> std::string {
    nlohmann::json config = good;
    config[key] = value;
    try {
      TrialConfigFromJson(config);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message("ulysses", 0), "key 'ulysses': expected an integer from 1 to 1024, got 0");
  EXPECT_EQ(message("timeout_s", -5),
            "key 'timeout_s': expected a duration such as 90s, 30m or 2h, got -5");
  EXPECT_EQ(message("vae_tile", 100),
            "key 'vae_tile': expected 0 (decode in one piece) or a tile of 64 to 16384 pixels, a "
            "multiple of 64, got 100");
  EXPECT_EQ(message("ulysess", 2), "unknown key 'ulysess'");
  EXPECT_EQ(message("graph", "cuda-graph"),
            "key 'graph': expected one of eager, cuda_graph, got \"cuda-graph\"");
  EXPECT_EQ(message("graph", "cuda_graph"), "accepted");
  EXPECT_EQ(message("attention", "sage"),
            "key 'attention': expected one of auto, flash, efficient, cudnn, math, got \"sage\"");
  EXPECT_EQ(message("attention", "cudnn"), "accepted");
  EXPECT_EQ(message("quant", "fp8"),
            "key 'quant': expected one of none, fp8_rowwise, fp8_tensor, got \"fp8\"");
  EXPECT_EQ(message("quant", "fp8_rowwise"), "accepted");
  EXPECT_EQ(message("schedule", nlohmann::json({{"high_precision_frist", 2}})),
            "key 'schedule': expected a map {high_precision_first: N, high_precision_last: M} "
            "of steps from 0 to 1000, got {\"high_precision_frist\":2}");
  EXPECT_EQ(message("schedule", nlohmann::json({{"high_precision_last", -1}})).substr(0, 40),
            "key 'schedule': expected a map {high_pre");
  EXPECT_EQ(message("schedule", nlohmann::json({{"high_precision_first", 2}})), "accepted");
  EXPECT_EQ(message("quant_exclude", nlohmann::json::array({"blocks.0.fc1; rm -rf"})).substr(0, 45),
            "key 'quant_exclude': expected a list of modul");
  EXPECT_EQ(message("quant_exclude", nlohmann::json::array({"transformer_blocks.*.ff_?c1"})),
            "accepted");
  std::string expected;
  TrialConfig scratch;
  EXPECT_FALSE(ApplySetting(scratch, "ulysses", 0, &expected));
  EXPECT_EQ(expected, "an integer from 1 to 1024");  // the same words, from the same table
  EXPECT_EQ(CanonicalJson(TrialConfigFromJson(good)), good);
}

TEST(TrialTest, JsonRoundTripPreservesTheConfig) {
  TrialConfig c;
  c.model = "pixart-sigma";
  c.precision = Precision::kTf32;
  c.scope = Scope::kForward;
  c.repeats = {3, 9, 0.02, 60};
  c.cfg = 2;
  c.seed = -7;
  c.pipefusion = 2;
  c.pipefusion_patches = 4;
  c.pipefusion_warmup_steps = 3;
  c.model_overrides = {{"depth", 14}, {"hidden", 768}};
  c.workload = Workload::kCommand;
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(c)), c);
}

TEST(TrialTest, OverriddenModelIsAnObjectAndPlainPresetAString) {
  TrialConfig c;
  EXPECT_TRUE(CanonicalJson(c)["model"].is_string());
  c.model_overrides = {{"depth", 14}};
  EXPECT_EQ(CanonicalJson(c)["model"].dump(), R"({"depth":14,"preset":"pixart-alpha"})");
  EXPECT_NE(TrialKey(c), TrialKey(TrialConfig{}));
}

TEST(TrialTest, PipefusionPatchesDefaultToTheDegree) {
  TrialConfig c;
  c.pipefusion = 4;
  EXPECT_EQ(CanonicalJson(c)["pipefusion_patches"], 4);
  EXPECT_EQ(IdentityText(c), R"({"pipefusion":4})");
  TrialConfig explicit_patches = c;
  explicit_patches.pipefusion_patches = 4;
  EXPECT_EQ(TrialKey(c), TrialKey(explicit_patches));  // same trial, same key
}

TEST(TrialTest, PipeFusionSettingsWithoutPipeFusionDoNotSplitKeys) {
  // A sweep that sets pipefusion_patches in its defaults gives its 1-stage trials the same key
  // as any other 1-stage trial of the computation: they are the same computation (and each
  // other's output-error reference).
  TrialConfig plain;
  TrialConfig with_settings = plain;
  with_settings.pipefusion_patches = 4;
  with_settings.pipefusion_warmup_steps = 3;
  EXPECT_EQ(TrialKey(with_settings), TrialKey(plain));
  EXPECT_EQ(CanonicalJson(with_settings)["pipefusion_patches"], 1);
  with_settings.pipefusion = 2;
  EXPECT_NE(TrialKey(with_settings), TrialKey(TrialConfig{}));
}

TEST(TrialTest, MalformedJsonNamesTheKey) {
  auto j = CanonicalJson(TrialConfig{});
  j["precision"] = "fp64";
  try {
    TrialConfigFromJson(j);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp64"), std::string::npos);
  }
}

TEST(TrialTest, StatusNamesRoundTrip) {
  for (auto s : {TrialStatus::kPending, TrialStatus::kRunning, TrialStatus::kOk,
                 TrialStatus::kSkipped, TrialStatus::kOom, TrialStatus::kTimeout,
                 TrialStatus::kCrashed, TrialStatus::kFailed, TrialStatus::kInterrupted})
    EXPECT_EQ(ParseStatus(StatusName(s)), s);
}

// The one bytes-per-element rule that the communication prediction and the memory estimate read.
TEST(TrialTest, BytesPerElementFollowsThePrecision) {
  EXPECT_EQ(BytesPerElement(Precision::kFp32), 4.0);
  EXPECT_EQ(BytesPerElement(Precision::kTf32), 4.0);  // tf32 stores fp32
  EXPECT_EQ(BytesPerElement(Precision::kBf16), 2.0);
  EXPECT_EQ(BytesPerElement(Precision::kFp16), 2.0);
}

}  // namespace
}  // namespace ditbench::trial_test
