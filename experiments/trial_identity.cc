#include "experiments/trial_identity.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "base/json_append.h"

namespace ditbench {
namespace {

// Key format v2's frozen identity defaults. Append new fields; never change a value.
const std::map<std::string, nlohmann::json>& FixedDefaults() {
  static const std::map<std::string, nlohmann::json> defaults = {
      {"batch", 1},
      {"model", "pixart-alpha"},
      {"precision", "bf16"},
      {"resolution", 1024},
      {"scope", "denoise"},
      {"seed", 0},
      {"steps", 20},
      {"workload", "dit"},
      // Appended after v2 was frozen, at the value every earlier trial used.
      {"pipefusion_warmup_steps", 1},
      // Appended with the `command` workload: a `dit` trial has neither.
      {"command", nlohmann::json::array()},
      {"custom", nlohmann::json::object()},
      // Appended with tiled VAE decoding: every earlier trial decoded in one piece.
      {"vae_tile", 0},
      // Appended with the CUDA-graph mode: every earlier trial ran eagerly.
      {"graph", "eager"},
      // Appended with video families: every earlier trial made an image.
      {"frames", 0},
      // Appended with the attention axis: every earlier trial let ditbench pick the kernel.
      {"attention", "auto"},
      // Appended with FP8 linear layers and per-step schedules: every earlier trial ran every
      // layer in its precision at every step.
      {"quant", "none"},
      {"quant_exclude", nlohmann::json::array()},
      {"schedule", nlohmann::json::object()},
      // Appended with step caching: every earlier trial computed every step.
      {"cache", "none"},
      // Appended with the split VAE decode: every earlier trial decoded on each rank alone.
      {"vae_parallel", 1},
      // Appended with serving under load: every earlier trial timed iterations back to back.
      {"serve", "none"},
  };
  return defaults;
}

// Each parallel degree's frozen identity default: 1 (kDegreeTable).
// Hashed rather than ordered: the planner looks up every field of every trial's computation.
const std::unordered_map<std::string, nlohmann::json>& IdentityDefaults() {
  static const std::unordered_map<std::string, nlohmann::json> defaults = [] {
    std::unordered_map<std::string, nlohmann::json> all(FixedDefaults().begin(),
                                                        FixedDefaults().end());
    for (const DegreeInfo& d : kDegreeTable) all.emplace(std::string(d.name), 1);
    return all;
  }();
  return defaults;
}

}  // namespace

nlohmann::json ComputationJson(const TrialConfig& c) {
  nlohmann::json model = c.model;
  if (!c.model_overrides.empty() || !c.weights.empty() || !c.vae_weights.empty()) {
    // weights_variant only ever comes with a folder, so a key without one is unchanged.
    model = {{"preset", c.model}};
    for (const auto& [key, value] : c.model_overrides) model[key] = value;
    if (!c.weights.empty()) model["weights"] = c.weights;
    if (!c.vae_weights.empty()) model["vae_weights"] = c.vae_weights;
    if (!c.weights_variant.empty()) model["weights_variant"] = c.weights_variant;
  }
  // Each field constructed in place in the object's map: an initializer list copies every
  // value twice, and nlohmann's operator[] makes a null to assign over (TrialKey runs this for
  // every trial a plan expands, and the plan's table and JSON again).
  nlohmann::json::object_t computation;
  computation.emplace("batch", c.batch);
  computation.emplace("model", std::move(model));
  computation.emplace("pipefusion_patches", c.effective_pipefusion_patches());
  // Without PipeFusion it computes nothing: normalised, so it never splits a key.
  computation.emplace("pipefusion_warmup_steps", c.pipefusion > 1 ? c.pipefusion_warmup_steps : 1);
  computation.emplace("precision", PrecisionName(c.precision));
  // A square as the number it always was; otherwise "WIDTHxHEIGHT".
  if (c.height > 0)
    computation.emplace("resolution", c.resolution_text());
  else
    computation.emplace("resolution", c.resolution);
  computation.emplace("scope", ScopeName(c.scope));
  computation.emplace("seed", c.seed);
  computation.emplace("steps", c.steps);
  computation.emplace("workload", WorkloadName(c.workload));
  for (const DegreeInfo& d : kDegreeTable) computation.emplace(std::string(d.name), c.*d.member);
  // A command's program and custom axes; written only when set, so that the canonical form of
  // a built-in trial is what it was before the `command` workload existed.
  if (!c.command.empty()) computation.emplace("command", c.command);
  if (c.vae_tile != 0) computation.emplace("vae_tile", c.vae_tile);
  if (c.vae_parallel != 1) computation.emplace("vae_parallel", c.vae_parallel);
  if (c.graph != GraphMode::kEager) computation.emplace("graph", GraphModeName(c.graph));
  if (c.attention != AttentionBackend::kAuto)
    computation.emplace("attention", AttentionBackendName(c.attention));
  if (c.quant != Quantization::kNone) {
    computation.emplace("quant", QuantizationName(c.quant));
    // Patterns name layers only when something is quantized: without, they change nothing.
    if (!c.quant_exclude.empty()) computation.emplace("quant_exclude", c.quant_exclude);
  }
  if (!c.cache.empty())
    computation.emplace("cache", nlohmann::json{{"kind", StepCacheKindName(c.cache.kind)},
                                                {"threshold", c.cache.threshold},
                                                {"warmup_steps", c.cache.warmup_steps}});
  if (c.serve) computation.emplace("serve", ServeLoadJson(*c.serve));
  if (!c.schedule.empty())
    computation.emplace("schedule",
                        nlohmann::json{{"high_precision_first", c.schedule.high_precision_first},
                                       {"high_precision_last", c.schedule.high_precision_last}});
  if (c.frames != 0) computation.emplace("frames", c.frames);
  if (!c.custom.empty()) {
    nlohmann::json custom = nlohmann::json::object();
    for (const auto& [name, value] : c.custom) custom[name] = value;
    computation.emplace("custom", std::move(custom));
  }
  return nlohmann::json(std::move(computation));
}

nlohmann::json PolicyJson(const TrialConfig& c) {
  nlohmann::json policy = nlohmann::json::object();
  AddPolicyJson(c, policy);
  return policy;
}

void AddPolicyJson(const TrialConfig& c, nlohmann::json& policy) {
  policy["profile_blocks"] = c.profile_blocks;
  // Written only when set, so that every earlier trial's policy reads as it did.
  if (c.profile_trace) policy["profile"] = kProfileTrace;
  if (!c.quality.empty()) policy["quality"] = QualityGateJson(c.quality);
  nlohmann::json& repeats = policy["repeats"];
  repeats["max"] = c.repeats.max;
  repeats["max_seconds"] = c.repeats.max_seconds;
  repeats["min"] = c.repeats.min;
  repeats["target_rel_ci"] = c.repeats.target_rel_ci;
  policy["timeout_s"] = c.timeout_s;
  policy["warmup"] = c.warmup;
}

namespace {

// IdentityDefault without copying the default: nullptr where the field has none.
const nlohmann::json* DefaultOf(const std::string& field, const nlohmann::json& computation) {
  static const nlohmann::json one = 1;
  if (field == "pipefusion_patches") {
    const auto it = computation.find("pipefusion");
    return it != computation.end() ? &*it : &one;
  }
  const auto it = IdentityDefaults().find(field);
  return it == IdentityDefaults().end() ? nullptr : &it->second;
}

// A served trace is known by its bytes, not by where they lie: with its digest
// (serve.trace_sha256) the identity leaves its path out, so that editing the trace makes new
// keys and moving it with its sweep does not. A load without a trace is as it always was.
bool KnownByDigest(const std::string& field, const nlohmann::json& value) {
  return field == "serve" && value.is_object() && value.contains("trace_sha256") &&
         value.contains("trace");
}

nlohmann::json ServeIdentity(nlohmann::json serve) {
  serve.erase("trace");
  return serve;
}

// A field's name as dump() writes it: quoted, and escaped where it needs to be (a field read
// from a database may be anything).
void AppendName(const std::string& field, JsonAppender& json, std::string& text) {
  const bool plain = std::all_of(field.begin(), field.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!plain) return json.Compact(nlohmann::json(field));
  text += '"';
  text += field;
  text += '"';
}

}  // namespace

void ForEachIdentityField(const nlohmann::json& computation, const IdentityFieldSkip& skip,
                          const IdentityFieldVisit& visit) {
  for (const auto& [field, value] : computation.items()) {
    if (skip && skip(field)) continue;
    const nlohmann::json* fallback = DefaultOf(field, computation);
    if (fallback && value == *fallback) continue;
    if (KnownByDigest(field, value)) {
      visit(field, ServeIdentity(value));
    } else {
      visit(field, value);
    }
  }
}

namespace {

// IdentityJson(computation).dump() without building the identity object: the computation's
// keys are already sorted, so its identity's fields are written in order, all through one
// serializer (one per value cost more than the rest of the key).
std::string IdentityDump(const nlohmann::json& computation) {
  std::string text = "{";
  JsonAppender json(text);
  ForEachIdentityField(computation, {}, [&](const std::string& field, const nlohmann::json& value) {
    if (text.size() > 1) text += ',';
    AppendName(field, json, text);
    text += ':';
    json.Compact(value);
  });
  return text += '}';
}

}  // namespace

std::optional<nlohmann::json> IdentityDefault(const std::string& field,
                                              const nlohmann::json& computation) {
  const nlohmann::json* fallback = DefaultOf(field, computation);
  if (!fallback) return std::nullopt;
  return *fallback;
}

nlohmann::json IdentityJson(const nlohmann::json& computation) {
  nlohmann::json identity = nlohmann::json::object();
  ForEachIdentityField(computation, {}, [&](const std::string& field, const nlohmann::json& value) {
    identity[field] = value;
  });
  return identity;
}

std::string IdentityText(const TrialConfig& config) {
  return IdentityDump(ComputationJson(config));
}

std::string KeyOfComputation(const nlohmann::json& computation) {
  return Sha256Hex(IdentityDump(computation)).substr(0, 16);
}

}  // namespace ditbench
