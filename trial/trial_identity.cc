#include "trial/trial_identity.h"

#include <map>

namespace ditbench {
namespace {

// Key format v2's frozen identity defaults. Append new fields; never change a value.
const std::map<std::string, nlohmann::json>& FixedDefaults() {
  static const std::map<std::string, nlohmann::json> defaults = {
      {"batch", 1},        {"model", "pixart-alpha"},
      {"precision", "bf16"},                   {"resolution", 1024},
      {"scope", "denoise"},
      {"seed", 0},         {"steps", 20},
      {"workload", "dit"},
      // Appended after v2 was frozen, at the value every earlier trial used.
      {"pipefusion_warmup_steps", 1},
      // Appended with the `command` workload: a `dit` trial has neither.
      {"command", nlohmann::json::array()},
      {"custom", nlohmann::json::object()},
      // Appended with tiled VAE decoding: every earlier trial decoded in one piece.
      {"vae_tile", 0},
  };
  return defaults;
}

// Each parallel degree's frozen identity default: 1 (kDegreeTable).
const std::map<std::string, nlohmann::json>& IdentityDefaults() {
  static const std::map<std::string, nlohmann::json> defaults = [] {
    std::map<std::string, nlohmann::json> all = FixedDefaults();
    for (const DegreeInfo& d : kDegreeTable) all.emplace(std::string(d.name), 1);
    return all;
  }();
  return defaults;
}

}  // namespace

nlohmann::json ComputationJson(const TrialConfig& c) {
  nlohmann::json model = c.model;
  if (!c.model_overrides.empty() || !c.weights.empty() || !c.vae_weights.empty()) {
    model = {{"preset", c.model}};
    for (const auto& [key, value] : c.model_overrides) model[key] = value;
    if (!c.weights.empty()) model["weights"] = c.weights;
    if (!c.vae_weights.empty()) model["vae_weights"] = c.vae_weights;
  }
  nlohmann::json computation = {{"batch", c.batch},
          {"model", model},
          {"pipefusion_patches", c.effective_pipefusion_patches()},
          // Without PipeFusion it computes nothing: normalised, so it never splits a key.
          {"pipefusion_warmup_steps", c.pipefusion > 1 ? c.pipefusion_warmup_steps : 1},
          {"precision", std::string(PrecisionName(c.precision))},
          {"resolution", c.resolution},
          {"scope", std::string(ScopeName(c.scope))},
          {"seed", c.seed},
          {"steps", c.steps},
          {"workload", std::string(WorkloadName(c.workload))}};
  for (const DegreeInfo& d : kDegreeTable) computation[std::string(d.name)] = c.*d.member;
  // A command's program and custom axes; written only when set, so that the canonical form of
  // a built-in trial is what it was before the `command` workload existed.
  if (!c.command.empty()) computation["command"] = c.command;
  if (c.vae_tile != 0) computation["vae_tile"] = c.vae_tile;
  if (!c.custom.empty()) {
    nlohmann::json custom = nlohmann::json::object();
    for (const auto& [name, value] : c.custom) custom[name] = value;
    computation["custom"] = custom;
  }
  return computation;
}

nlohmann::json PolicyJson(const TrialConfig& c) {
  return {{"profile_blocks", c.profile_blocks},
          {"repeats",
           {{"max", c.repeats.max},
            {"max_seconds", c.repeats.max_seconds},
            {"min", c.repeats.min},
            {"target_rel_ci", c.repeats.target_rel_ci}}},
          {"timeout_s", c.timeout_s},
          {"warmup", c.warmup}};
}

std::optional<nlohmann::json> IdentityDefault(const std::string& field,
                                              const nlohmann::json& computation) {
  if (field == "pipefusion_patches") {
    return computation.contains("pipefusion") ? computation["pipefusion"] : nlohmann::json(1);
  }
  auto it = IdentityDefaults().find(field);
  if (it == IdentityDefaults().end()) return std::nullopt;
  return it->second;
}

nlohmann::json IdentityJson(const nlohmann::json& computation) {
  nlohmann::json identity = nlohmann::json::object();
  for (const auto& [field, value] : computation.items()) {
    std::optional<nlohmann::json> fallback = IdentityDefault(field, computation);
    if (!fallback || value != *fallback) identity[field] = value;
  }
  return identity;
}

std::string IdentityText(const TrialConfig& config) {
  return IdentityJson(ComputationJson(config)).dump();
}

std::string KeyOfComputation(const nlohmann::json& computation) {
  return Sha256Hex(IdentityJson(computation).dump()).substr(0, 16);
}

}  // namespace ditbench
