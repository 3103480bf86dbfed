#include "experiments/trial_fields.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/setting_values.h"
#include "experiments/trial_settings.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

// Whether a field added after key format v2 was frozen is written only when set, so that a
// configuration that leaves it at its default has the canonical form (and key) it always had.
enum class Written { kAlways, kWhenSet };

const TrialConfig& Defaults() {
  static const TrialConfig defaults;
  return defaults;
}

// A field held in one member of TrialConfig (or of its ParallelDegrees base): `to_json` and
// `to_text` give its canonical and label forms.
template <typename Class, typename T, typename ToJson, typename ToText>
TrialField MemberField(std::string key, T Class::*member, FieldRole role,
                       std::optional<Json> identity_default, FieldSetter set, Written written,
                       ToJson to_json, ToText to_text) {
  TrialField field;
  field.key = key;
  field.setting = key;
  field.role = role;
  field.identity_default = std::move(identity_default);
  field.set = std::move(set);
  field.is_set = [member](const TrialConfig& c) { return !(c.*member == Defaults().*member); };
  field.value = [member, written, to_json](const TrialConfig& c) -> std::optional<Json> {
    if (written == Written::kAlways || !(c.*member == Defaults().*member))
      return to_json(c.*member);
    return std::nullopt;
  };
  field.reset = [member](TrialConfig& c) { c.*member = Defaults().*member; };
  field.text = [member, to_text](const TrialConfig& c) { return to_text(c.*member); };
  return field;
}

template <typename Class>
TrialField IntField(std::string key, int Class::*member, int lo, int hi, FieldRole role,
                    std::optional<Json> identity_default, Written written) {
  FieldSetter set = [member, lo, hi](TrialConfig& c, const Json& v, std::string* expected) {
    if (AsInt(v, lo, hi, &(c.*member))) return true;
    *expected = fmt::format("an integer from {} to {}", lo, hi);
    return false;
  };
  return MemberField(
      std::move(key), member, role, std::move(identity_default), std::move(set), written,
      [](int value) { return Json(value); }, [](int value) { return std::to_string(value); });
}

// An enum field: its values typed once, as the names its parser accepts (trial.h).
template <typename E>
TrialField EnumField(std::string key, E TrialConfig::*member, std::string_view (*name)(E),
                     std::optional<E> (*parse)(std::string_view),
                     const std::vector<std::string_view>& names, FieldRole role,
                     std::optional<Json> identity_default, Written written) {
  FieldSetter set = [member, parse, &names](TrialConfig& c, const Json& v, std::string* expected) {
    const auto value = v.is_string() ? parse(v.get<std::string>()) : std::nullopt;
    if (value) c.*member = *value;
    *expected = OneOf(names);
    return value.has_value();
  };
  return MemberField(
      std::move(key), member, role, std::move(identity_default), std::move(set), written,
      [name](E value) { return Json(name(value)); },
      [name](E value) { return std::string(name(value)); });
}

// A field whose value is a whole structure (model, resolution, cache, ...), written by hand.
TrialField StructuredField(std::string key, FieldRole role, std::optional<Json> identity_default,
                           FieldSetter set,
                           std::function<std::optional<Json>(const TrialConfig&)> value,
                           std::function<void(TrialConfig&)> reset,
                           std::function<bool(const TrialConfig&)> is_set,
                           std::function<std::string(const TrialConfig&)> text) {
  TrialField field;
  field.key = key;
  field.setting = std::move(key);
  field.role = role;
  field.identity_default = std::move(identity_default);
  field.set = std::move(set);
  field.value = std::move(value);
  field.reset = std::move(reset);
  field.is_set = std::move(is_set);
  field.text = std::move(text);
  return field;
}

Json ModelJson(const TrialConfig& c) {
  if (c.model_overrides.empty() && c.weights.empty() && c.vae_weights.empty()) return c.model;
  // weights_variant only ever comes with a folder, so a key without one is unchanged.
  Json model = {{"preset", c.model}};
  for (const auto& [key, value] : c.model_overrides) model[key] = value;
  if (!c.weights.empty()) model["weights"] = c.weights;
  if (!c.vae_weights.empty()) model["vae_weights"] = c.vae_weights;
  if (!c.weights_variant.empty()) model["weights_variant"] = c.weights_variant;
  return model;
}

Json CacheJson(const StepCache& cache) {
  return {{"kind", StepCacheKindName(cache.kind)},
          {"threshold", cache.threshold},
          {"warmup_steps", cache.warmup_steps}};
}

Json ScheduleJson(const StepSchedule& schedule) {
  return {{"high_precision_first", schedule.high_precision_first},
          {"high_precision_last", schedule.high_precision_last}};
}

// The fields that describe what a trial computes, besides the degrees.
void AddComputationFields(std::vector<TrialField>& t) {
  const auto plain = FieldRole::kPlain;
  t.push_back(IntField("batch", &TrialConfig::batch, 1, 4096, plain, 1, Written::kAlways));
  t.push_back(StructuredField(
      "model", plain, "pixart-alpha", SetModel,
      [](const TrialConfig& c) -> std::optional<Json> { return Json(ModelJson(c)); }, {},
      [](const TrialConfig& c) { return ModelJson(c) != Json("pixart-alpha"); },
      [](const TrialConfig& c) { return c.model; }));
  t.push_back(StructuredField(
      "resolution", plain, 1024, SetResolution,
      [](const TrialConfig& c) -> std::optional<Json> {
        // A square as the number it always was; otherwise "WIDTHxHEIGHT".
        if (c.height > 0) return Json(c.resolution_text());
        return Json(c.resolution);
      },
      {}, [](const TrialConfig& c) { return c.resolution != 1024 || c.height > 0; },
      [](const TrialConfig& c) { return c.resolution_text(); }));
  // Video families only (experiments/validity.cc says which frame counts each takes).
  t.push_back(IntField("frames", &TrialConfig::frames, 1, 100000, plain, 0, Written::kWhenSet));
  t.push_back(EnumField("precision", &TrialConfig::precision, PrecisionName, ParsePrecision,
                        PrecisionNames(), plain, "bf16", Written::kAlways));
  t.push_back(EnumField("scope", &TrialConfig::scope, ScopeName, ParseScope, ScopeNames(), plain,
                        "denoise", Written::kAlways));
  t.push_back(IntField("steps", &TrialConfig::steps, 1, 10000, plain, 20, Written::kAlways));
  t.push_back(MemberField(
      "seed", &TrialConfig::seed, plain, 0,
      [](TrialConfig& c, const Json& v, std::string* expected) {
        *expected = "an integer";
        if (!v.is_number_integer()) return false;
        c.seed = v.get<std::int64_t>();
        return true;
      },
      Written::kAlways, [](std::int64_t seed) { return Json(seed); },
      [](std::int64_t seed) { return std::to_string(seed); }));
  t.push_back(
      IntField("vae_tile", &TrialConfig::vae_tile, 0, kVaeTileMax, plain, 0, Written::kWhenSet));
  t.back().set = [](TrialConfig& c, const Json& v, std::string* expected) {
    *expected = kVaeTileExpected;
    int tile = 0;
    if (!AsInt(v, 0, kVaeTileMax, &tile) || !IsValidVaeTile(tile)) return false;
    c.vae_tile = tile;
    return true;
  };
  // A CUDA graph replays the same kernels: the computation is the trial's, kept.
  t.push_back(EnumField("graph", &TrialConfig::graph, GraphModeName, ParseGraphMode,
                        GraphModeNames(), plain, "eager", Written::kWhenSet));
  t.push_back(StructuredField(
      "serve", plain, "none",
      [](TrialConfig& c, const Json& v, std::string* expected) {
        return ParseServeLoad(v, &c.serve, expected);
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (c.serve) return Json(ServeLoadJson(*c.serve));
        return std::nullopt;
      },
      [](TrialConfig& c) { c.serve.reset(); },
      [](const TrialConfig& c) { return c.serve.has_value(); },
      [](const TrialConfig& c) -> std::string {
        if (!c.serve) return "none";
        const Json arrivals = ServeLoadJson(*c.serve).value("arrivals", Json("load"));
        return arrivals.is_string() ? arrivals.get<std::string>() : arrivals.dump();
      }));
}

// The fields that split a degree's work, approximate, or skip work: reset in the reference.
void AddKnobFields(std::vector<TrialField>& t) {
  t.push_back(StructuredField(
      "pipefusion_patches", FieldRole::kSplitsWork, std::nullopt,
      [](TrialConfig& c, const Json& v, std::string* expected) {
        if (AsInt(v, 1, 4096, &c.pipefusion_patches)) return true;
        *expected = "an integer from 1 to 4096";
        return false;
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        return Json(c.effective_pipefusion_patches());
      },
      [](TrialConfig& c) { c.pipefusion_patches = Defaults().pipefusion_patches; },
      [](const TrialConfig& c) { return c.effective_pipefusion_patches() != c.pipefusion; },
      [](const TrialConfig& c) { return std::to_string(c.effective_pipefusion_patches()); }));
  t.back().identity_default_field = "pipefusion";
  t.push_back(IntField("pipefusion_warmup_steps", &TrialConfig::pipefusion_warmup_steps, 0, 100000,
                       FieldRole::kSplitsWork, 1, Written::kAlways));
  // Without PipeFusion it computes nothing: normalised, so it never splits a key.
  t.back().value = [](const TrialConfig& c) -> std::optional<Json> {
    return Json(c.pipefusion > 1 ? c.pipefusion_warmup_steps : 1);
  };
  t.push_back(IntField("vae_parallel", &TrialConfig::vae_parallel, 1, kMaxVaeParallel,
                       FieldRole::kSplitsWork, 1, Written::kWhenSet));
  const auto approximates = FieldRole::kApproximates;
  t.push_back(EnumField("attention", &TrialConfig::attention, AttentionBackendName,
                        ParseAttentionBackend, AttentionBackendNames(), approximates, "auto",
                        Written::kWhenSet));
  t.push_back(EnumField("quant", &TrialConfig::quant, QuantizationName, ParseQuantization,
                        QuantizationNames(), approximates, "none", Written::kWhenSet));
  t.push_back(StructuredField(
      "quant_exclude", approximates, Json::array(), SetQuantExclude,
      [](const TrialConfig& c) -> std::optional<Json> {
        // Patterns name layers only when something is quantized: without, they change nothing.
        if (c.quant != Quantization::kNone && !c.quant_exclude.empty())
          return Json(c.quant_exclude);
        return std::nullopt;
      },
      [](TrialConfig& c) { c.quant_exclude.clear(); },
      [](const TrialConfig& c) { return !c.quant_exclude.empty(); },
      [](const TrialConfig& c) { return fmt::format("{}", fmt::join(c.quant_exclude, ",")); }));
  t.push_back(StructuredField(
      "schedule", approximates, Json::object(), SetSchedule,
      [](const TrialConfig& c) -> std::optional<Json> {
        if (!c.schedule.empty()) return Json(ScheduleJson(c.schedule));
        return std::nullopt;
      },
      [](TrialConfig& c) { c.schedule = StepSchedule{}; },
      [](const TrialConfig& c) { return !c.schedule.empty(); },
      [](const TrialConfig& c) {
        return fmt::format("first{},last{}", c.schedule.high_precision_first,
                           c.schedule.high_precision_last);
      }));
  t.push_back(StructuredField(
      "cache", FieldRole::kSkipsWork, "none", SetCache,
      [](const TrialConfig& c) -> std::optional<Json> {
        if (!c.cache.empty()) return Json(CacheJson(c.cache));
        return std::nullopt;
      },
      [](TrialConfig& c) { c.cache = StepCache{}; },
      [](const TrialConfig& c) { return !c.cache.empty(); },
      [](const TrialConfig& c) { return std::string(StepCacheKindName(c.cache.kind)); }));
}

// The fields no sweep key sets: the workload is the sweep's, a command's program and custom
// axes its own sections (experiments/sweep_spec.h). Read back from a stored configuration by
// ApplyCanonicalField.
void AddWorkloadFields(std::vector<TrialField>& t) {
  t.push_back(StructuredField(
      "workload", FieldRole::kPlain, "dit",
      [](TrialConfig& c, const Json& v, std::string* expected) {
        *expected = WorkloadNameList();
        const auto workload = v.is_string() ? ParseWorkload(v.get<std::string>()) : std::nullopt;
        if (workload) c.workload = *workload;
        return workload.has_value();
      },
      [](const TrialConfig& c) -> std::optional<Json> { return Json(WorkloadName(c.workload)); },
      {}, [](const TrialConfig& c) { return c.workload != Workload::kDit; },
      [](const TrialConfig& c) { return std::string(WorkloadName(c.workload)); }));
  // Written only when set, so that the canonical form of a built-in trial is what it was
  // before the `command` workload existed.
  t.push_back(StructuredField(
      "command", FieldRole::kPlain, Json::array(),
      [](TrialConfig& c, const Json& v, std::string* expected) {
        *expected = "a list of strings";
        if (!v.is_array()) return false;
        std::vector<std::string> command;
        for (const auto& part : v) {
          if (!part.is_string()) return false;
          command.push_back(part.get<std::string>());
        }
        c.command = std::move(command);
        return true;
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (!c.command.empty()) return Json(c.command);
        return std::nullopt;
      },
      {}, [](const TrialConfig& c) { return !c.command.empty(); },
      [](const TrialConfig& c) { return fmt::format("{}", fmt::join(c.command, " ")); }));
  t.push_back(StructuredField(
      "custom", FieldRole::kPlain, Json::object(),
      [](TrialConfig& c, const Json& v, std::string* expected) {
        *expected = "an object of custom axes, each a name and a scalar value";
        if (!v.is_object()) return false;
        for (const auto& [name, axis] : v.items())
          if (!IsCustomAxisName(name) || !axis.is_primitive() || axis.is_null()) return false;
        for (const auto& [name, axis] : v.items()) c.custom[name] = axis;
        return true;
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (c.custom.empty()) return std::nullopt;
        Json custom = Json::object();
        for (const auto& [name, value] : c.custom) custom[name] = value;
        return custom;
      },
      {}, [](const TrialConfig& c) { return !c.custom.empty(); },
      [](const TrialConfig& c) { return Json(c.custom).dump(); }));
  t.push_back(StructuredField(
      "engine", FieldRole::kPlain, Json::object(),
      [](TrialConfig& c, const Json& v, std::string* expected) {
        std::string problem;
        if (EngineSpecFromJson(v, &c.engine, &problem)) return true;
        *expected = "an engine mapping: " + problem;
        return false;
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (c.engine.empty()) return std::nullopt;
        return EngineSpecJson(c.engine);
      },
      [](TrialConfig& c) { c.engine = EngineSpec{}; },
      [](const TrialConfig& c) { return !c.engine.empty(); },
      [](const TrialConfig& c) {
        return c.engine.url.empty() ? fmt::format("{}", fmt::join(c.engine.start, " "))
                                    : c.engine.url;
      }));
  for (TrialField& field : t)
    if (field.key == "workload" || field.key == "command" || field.key == "custom" ||
        field.key == "engine")
      field.setting.clear();
}

// How the trial is measured: in trial.json and trials.policy_json, never in the key.
void AddPolicyFields(std::vector<TrialField>& t) {
  const auto policy = FieldRole::kPolicy;
  t.push_back(
      IntField("warmup", &TrialConfig::warmup, 0, 10000, policy, std::nullopt, Written::kAlways));
  t.push_back(StructuredField("repeats", policy, std::nullopt, SetRepeats,
                              [](const TrialConfig& c) -> std::optional<Json> {
                                return Json{{"max", c.repeats.max},
                                            {"max_seconds", c.repeats.max_seconds},
                                            {"min", c.repeats.min},
                                            {"target_rel_ci", c.repeats.target_rel_ci}};
                              },
                              {}, {}, {}));
  t.push_back(StructuredField(
      "timeout_s", policy, std::nullopt,
      [](TrialConfig& c, const Json& v, std::string* expected) {
        double s = 0;
        *expected = "a duration such as 90s, 30m or 2h";
        if (!ParseDuration(v, &s) || s <= 0) return false;
        c.timeout_s = s;
        return true;
      },
      [](const TrialConfig& c) -> std::optional<Json> { return Json(c.timeout_s); }, {}, {}, {}));
  t.back().setting = "timeout";
  // A boolean policy in `member`: written always, or only when true (`pad_heads`, so that
  // every earlier trial's policy reads as it did).
  const auto boolean = [&](std::string key, bool TrialConfig::*member, bool always) {
    t.push_back(StructuredField(
        std::move(key), policy, std::nullopt,
        [member](TrialConfig& c, const Json& v, std::string* expected) {
          *expected = "true or false";
          if (!v.is_boolean()) return false;
          c.*member = v.get<bool>();
          return true;
        },
        [member, always](const TrialConfig& c) -> std::optional<Json> {
          if (always || c.*member) return Json(c.*member);
          return std::nullopt;
        },
        {}, {}, {}));
  };
  boolean("profile_blocks", &TrialConfig::profile_blocks, /*always=*/true);
  boolean("pad_heads", &TrialConfig::pad_heads, /*always=*/false);
  // Top-level keys of a sweep, not trial settings; written only when set, so that every
  // earlier trial's policy reads as it did.
  t.push_back(StructuredField(
      "profile", policy, std::nullopt,
      [](TrialConfig& c, const Json& v, std::string* expected) {
        *expected = kProfileExpected;
        if (v != kProfileTrace && v != kProfileNone) return false;
        c.profile_trace = v == kProfileTrace;
        return true;
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (c.profile_trace) return Json(kProfileTrace);
        return std::nullopt;
      },
      {}, {}, {}));
  t.push_back(StructuredField(
      "quality", policy, std::nullopt,
      [](TrialConfig& c, const Json& v, std::string* expected) {
        return QualityGateFromJson(v, &c.quality, expected);
      },
      [](const TrialConfig& c) -> std::optional<Json> {
        if (!c.quality.empty() || c.quality.restarts || c.quality.reference)
          return Json(QualityGateJson(c.quality));
        return std::nullopt;
      },
      {}, {}, {}));
  for (TrialField& field : t)
    if (field.key == "profile" || field.key == "quality") field.setting.clear();
}

std::vector<TrialField> BuildTable() {
  std::vector<TrialField> table;
  AddComputationFields(table);
  // The parallel degrees: integers from 1 to the degree's maximum (kDegreeTable). A degree
  // left out of the labels at 1 is left out of the key at 1 too: every key written before it
  // existed stays the key of the same trial.
  for (const DegreeInfo& d : kDegreeTable)
    table.push_back(IntField(std::string(d.name), d.member, 1, d.max, FieldRole::kDegree, 1,
                             d.shown_at_one ? Written::kAlways : Written::kWhenSet));
  AddKnobFields(table);
  AddWorkloadFields(table);
  AddPolicyFields(table);
  std::sort(table.begin(), table.end(),
            [](const TrialField& a, const TrialField& b) { return a.key < b.key; });
  return table;
}

// How a rule names a field that is set: "pipefusion=2", "cache: fbcache".
std::string Mention(const TrialField& field, const TrialConfig& config) {
  const std::string value = field.text(config);
  const bool number = !value.empty() && std::all_of(value.begin(), value.end(),
                                                    [](char ch) { return ch >= '0' && ch <= '9'; });
  return number ? fmt::format("{}={}", field.key, value) : fmt::format("{}: {}", field.key, value);
}

}  // namespace

std::string_view FieldRoleName(FieldRole role) {
  switch (role) {
    case FieldRole::kPlain:
      return "plain";
    case FieldRole::kDegree:
      return "degree";
    case FieldRole::kSplitsWork:
      return "splits work";
    case FieldRole::kApproximates:
      return "approximates";
    case FieldRole::kSkipsWork:
      return "skips work";
    case FieldRole::kPolicy:
      break;
  }
  return "policy";
}

bool ResetInReference(FieldRole role) {
  return role == FieldRole::kDegree || role == FieldRole::kSplitsWork ||
         role == FieldRole::kApproximates || role == FieldRole::kSkipsWork;
}

const std::vector<TrialField>& TrialFields() {
  static const std::vector<TrialField> table = BuildTable();
  return table;
}

const TrialField* FieldBySetting(std::string_view setting) {
  for (const TrialField& field : TrialFields())
    if (!field.setting.empty() && field.setting == setting) return &field;
  return nullptr;
}

const TrialField* FieldByKey(std::string_view key) {
  const auto& table = TrialFields();
  const auto it =
      std::lower_bound(table.begin(), table.end(), key,
                       [](const TrialField& f, std::string_view k) { return f.key < k; });
  return it != table.end() && it->key == key ? &*it : nullptr;
}

std::vector<std::string> FieldsWithRole(std::initializer_list<FieldRole> roles) {
  std::vector<std::string> keys;
  for (const TrialField& field : TrialFields())
    if (std::find(roles.begin(), roles.end(), field.role) != roles.end()) keys.push_back(field.key);
  return keys;
}

TrialConfig ReferenceConfig(const TrialConfig& config) {
  TrialConfig reference = config;
  for (const TrialField& field : TrialFields())
    if (ResetInReference(field.role)) field.reset(reference);
  return reference;
}

std::string OneOf(const std::vector<std::string_view>& names) {
  return fmt::format("one of {}", fmt::join(names, ", "));
}

const std::vector<NotBuiltPair>& NotBuiltPairs() {
  static const std::vector<NotBuiltPair> pairs = {
      {"serve", "vae_parallel",
       "its collectives span the trial's ranks, and a serving trial's replicas run different "
       "requests"},
      {"serve", "cache",
       "its collectives span the trial's ranks, and a serving trial's replicas run different "
       "requests"},
      {"serve", "graph", "a serving trial runs its requests eagerly"},
      {"cache", "pipefusion",
       "PipeFusion's stages run different blocks, so no rank holds the first block's residual "
       "and the others' at once"},
      {"cache", "graph",
       "the cache decides on the host, step by step, whether to run the blocks; a captured "
       "graph replays a fixed step (use graph: eager)"},
  };
  return pairs;
}

std::optional<std::string> NotBuiltProblem(const TrialConfig& config) {
  for (const NotBuiltPair& pair : NotBuiltPairs()) {
    const TrialField* a = FieldByKey(pair.a);
    const TrialField* b = FieldByKey(pair.b);
    if (a->is_set(config) && b->is_set(config))
      return fmt::format("{} with {} is not built: {}", Mention(*a, config), Mention(*b, config),
                         pair.why);
  }
  return std::nullopt;
}

}  // namespace ditbench
