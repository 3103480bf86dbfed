#include "analysis/configuration_group.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/comparison.h"
#include "base/untrusted_input.h"
#include "experiments/trial_fields.h"
#include "experiments/trial_identity.h"
#include "experiments/trial_settings.h"
#include "experiments/workload.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

// Computation fields the report group names (ReportGroup) or the label spells out otherwise
// (DegreesLabel: the degrees and custom axes); a command's program is the group's workload.
const std::set<std::string>& NamedElsewhere() {
  static const std::set<std::string> fields = [] {
    std::set<std::string> named = {"batch",     "command",    "custom", "engine", "model",
                                   "precision", "resolution", "scope",  "seed",   "serve",
                                   "steps",     "workload",   "frames"};
    for (const DegreeInfo& d : kDegreeTable) named.emplace(d.name);
    return named;
  }();
  return fields;
}

// Fields that only say how the work is split over ranks: a 1-rank baseline has its own.
const std::vector<std::string>& ParallelFields() {
  // The degrees and how their work is split (PipeFusion's patches, the split decode): a 1-rank
  // trial has its own (experiments/trial_fields.h).
  static const std::vector<std::string> fields =
      FieldsWithRole({FieldRole::kDegree, FieldRole::kSplitsWork});
  return fields;
}

// The computation as stored, or (a row made by hand) as the row's columns spell it.
nlohmann::json RowComputation(const ResultRow& row) {
  if (!row.computation.empty()) {
    nlohmann::json stored = ParseStoredJson(row.computation);
    if (stored.is_object()) return stored;
  }
  nlohmann::json model = row.model;
  if (!row.model_overrides.empty()) {
    nlohmann::json overrides = ParseStoredJson(row.model_overrides);
    if (overrides.is_object()) model = overrides;
  }
  nlohmann::json computation = {
      {"batch", row.batch},
      {"model", model},
      {"pipefusion_patches", row.pipefusion_patches > 0 ? row.pipefusion_patches : row.pipefusion},
      {"pipefusion_warmup_steps", row.pipefusion_warmup_steps},
      {"precision", row.precision},
      {"resolution", row.height > 0 && row.height != row.resolution
                         ? nlohmann::json(fmt::format("{}x{}", row.resolution, row.height))
                         : nlohmann::json(row.resolution)},
      {"scope", row.scope},
      {"seed", row.seed},
      {"steps", row.steps},
      {"workload", WorkloadName(row.workload)}};
  for (const DegreeInfo& d : kDegreeTable) computation[std::string(d.name)] = row.*d.member;
  nlohmann::json axes = ParseStoredJson(row.axes.empty() ? "{}" : row.axes);
  if (axes.is_object() && !axes.empty()) computation["custom"] = axes;
  if (row.frames > 0) computation["frames"] = row.frames;
  return computation;
}

// `field` of `computation`, its identity default when a row stored before the field existed
// lacks it.
nlohmann::json Field(const nlohmann::json& computation, const std::string& field) {
  if (auto it = computation.find(field); it != computation.end()) return *it;
  return IdentityDefault(field, computation).value_or(nlohmann::json());
}

std::string Plain(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A served trial's `serve` identity as "key=value" words in key order, a trace by its digest
// (IdentityJson leaves its path out); "" for a timed trial ("none").
std::string LoadText(const nlohmann::json& serve) {
  if (!serve.is_object()) return "";
  const nlohmann::json identity = IdentityJson({{"serve", serve}}).value("serve", serve);
  std::string text;
  for (const auto& [key, value] : identity.items()) {
    // A share of capacity as two words: "rate=0.1*capacity capacity_concurrency=4".
    if (key == "rate" && value.is_object()) {
      for (const auto& [field, part] : value.items())
        text += fmt::format("{}{}", text.empty() ? "" : " ",
                            field == "of_capacity" ? fmt::format("rate={}*capacity", Plain(part))
                                                   : fmt::format("{}={}", field, Plain(part)));
      continue;
    }
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, Plain(value));
  }
  return text;
}

ReportGroup GroupOf(const nlohmann::json& computation, bool profile_blocks) {
  ReportGroup group;
  const nlohmann::json model = Field(computation, "model");
  if (model.is_object()) {
    group.model = Plain(model.value("preset", nlohmann::json("")));
    std::string overrides;
    for (const auto& [key, value] : model.items()) {
      if (key == "preset") continue;
      overrides += fmt::format("{}{}:{}", overrides.empty() ? "" : ",", key, value.dump());
    }
    if (!overrides.empty()) group.model += "{" + overrides + "}";
  } else {
    group.model = Plain(model);
  }
  // A number (a square) or "WIDTHxHEIGHT", read as the sweep's setting reads it.
  TrialConfig shape;
  std::string expected;
  if (ApplySetting(shape, "resolution", Field(computation, "resolution"), &expected)) {
    group.resolution = shape.resolution;
    group.height = shape.image_height();
  }
  const nlohmann::json frames = Field(computation, "frames");
  group.frames = frames.is_number_integer() ? frames.get<std::int64_t>() : 0;
  group.precision = Plain(Field(computation, "precision"));
  group.scope = Plain(Field(computation, "scope"));
  group.batch = Field(computation, "batch").get<std::int64_t>();
  group.steps = Field(computation, "steps").get<std::int64_t>();
  group.profile_blocks = profile_blocks;
  group.workload = ParseWorkload(Plain(Field(computation, "workload"))).value_or(Workload::kDit);
  group.load = LoadText(Field(computation, "serve"));
  return group;
}

// The identity without the seed (and, for the baseline match, without the parallel fields).
nlohmann::json WithoutSeed(const ResultRow& row, bool drop_parallel) {
  nlohmann::json identity = RowIdentity(row);
  identity.erase("seed");
  if (drop_parallel)
    for (const std::string& field : ParallelFields()) identity.erase(field);
  return identity;
}

// What a 1-rank baseline shares with its row: the computation but seed and parallel settings,
// and profile_blocks.
std::string SerialKey(const ResultRow& row) {
  return fmt::format("{}|{}", row.profile_blocks, WithoutSeed(row, /*drop_parallel=*/true).dump());
}

}  // namespace

std::string ReportGroup::Label() const {
  return fmt::format("{}{} · {} · {} · {} · batch {} · {} steps{}",
                     // a workload whose model is only a label says what ran
                     TraitsOf(workload).builtin_model ? std::string()
                                                      : std::string(WorkloadName(workload)) + " · ",
                     model, ResolutionLabel(), precision, scope, batch, steps,
                     profile_blocks ? " · blocks profiled" : "") +
         (load.empty() ? "" : " · served at " + load);
}

std::string ReportGroup::Text() const {
  std::string text = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", model, resolution, precision, scope,
                                 batch, steps, profile_blocks, WorkloadName(workload));
  // Written only where they differ from an image's, so that an image group's text is unchanged.
  if (height != resolution) text += fmt::format("|height={}", height);
  if (frames > 0) text += fmt::format("|frames={}", frames);
  if (!load.empty()) text += "|serve=" + load;
  return text;
}

std::string ReportGroup::ResolutionLabel() const {
  std::string label = height == resolution ? fmt::format("{} px", resolution)
                                           : fmt::format("{}x{} px", resolution, height);
  if (frames > 0) label += fmt::format(" · {} frames", frames);
  return label;
}

std::optional<std::int64_t> TokensPerRank(const ResultRow& row) {
  if (!TraitsOf(row.workload).builtin_model) return std::nullopt;
  const nlohmann::json model = Field(RowComputation(row), "model");
  std::string name = model.is_string() ? model.get<std::string>() : "";
  std::map<std::string, int> overrides;
  if (model.is_object()) {
    name = model.value("preset", "");
    for (const auto& [key, value] : model.items())
      if (value.is_number_integer()) overrides[key] = value.get<int>();
  }
  std::string error;
  const auto resolved = ResolveModel(name, overrides, &error);
  const std::int64_t sequence = std::int64_t(row.ring) * row.ulysses;
  if (!resolved || sequence < 1) return std::nullopt;
  const ImageShape shape{static_cast<int>(row.resolution),
                         static_cast<int>(row.height > 0 ? row.height : row.resolution),
                         static_cast<int>(row.frames)};
  return ImageTokens(*resolved, shape) / sequence;
}

ReportGroup ReportGroupOf(const ResultRow& row) {
  return GroupOf(RowComputation(row), row.profile_blocks);
}

ReportGroup ReportGroupOf(const TrialConfig& config) {
  return GroupOf(ComputationJson(config), config.profile_blocks);
}

nlohmann::json RowIdentity(const ResultRow& row) { return IdentityJson(RowComputation(row)); }

std::string ConfigurationOf(const ResultRow& row) {
  return fmt::format("{}|{}|{}|{}", row.campaign, row.device, row.profile_blocks,
                     WithoutSeed(row, /*drop_parallel=*/false).dump());
}

// A setting's value in a label: a per-step schedule as "first2,last2", a cache as
// "fbcache,threshold=0.2,warmup_steps=1", a list of patterns comma-joined, everything else as
// Plain.
static std::string SettingText(const std::string& field, const nlohmann::json& value) {
  if (field == "schedule" && value.is_object())
    return fmt::format("first{},last{}", Plain(value.value("high_precision_first", 0)),
                       Plain(value.value("high_precision_last", 0)));
  if (field == "cache" && value.is_object()) {  // "fbcache,threshold=0.2,warmup_steps=1"
    std::vector<std::string> items{Plain(value.value("kind", nlohmann::json("")))};
    for (const auto& [key, item] : value.items())
      if (key != "kind") items.push_back(fmt::format("{}={}", key, Plain(item)));
    return fmt::format("{}", fmt::join(items, ","));
  }
  if (value.is_array()) {
    std::vector<std::string> items;
    for (const nlohmann::json& item : value) items.push_back(Plain(item));
    return fmt::format("{}", fmt::join(items, ","));
  }
  return Plain(value);
}

// The "field=value" words of the identity of `computation` that no other label names and
// `shown_apart` omits.
static std::string LabelOfSettings(const nlohmann::json& computation,
                                   const std::set<std::string>& shown_apart) {
  std::string label;
  ForEachIdentityField(
      computation,
      // Asked first: most fields are named elsewhere, and need no look-up of their default.
      [&](const std::string& field) {
        return NamedElsewhere().count(field) > 0 || shown_apart.count(field) > 0;
      },
      [&](const std::string& field, const nlohmann::json& value) {
        label += fmt::format("{}{}={}", label.empty() ? "" : " ", field, SettingText(field, value));
      });
  return label;
}

std::string SettingsLabel(const ResultRow& row) { return LabelOfSettings(RowComputation(row), {}); }

// `label`, then a served trial's load ("served at arrivals=poisson rate=2 ..."): what only a
// report group's heading names apart.
static std::string WithLoad(std::string label, const nlohmann::json& computation) {
  const std::string load = LoadText(Field(computation, "serve"));
  if (load.empty()) return label;
  return label + (label.empty() ? "" : " ") + "served at " + load;
}

std::string SettingsAndLoadLabel(const ResultRow& row) {
  const nlohmann::json computation = RowComputation(row);
  return WithLoad(LabelOfSettings(computation, {}), computation);
}

std::string SettingsLabel(const TrialConfig& config, const std::set<std::string>& shown_apart) {
  const nlohmann::json computation = ComputationJson(config);
  const std::string label = LabelOfSettings(computation, shown_apart);
  return shown_apart.count("serve") ? label : WithLoad(label, computation);
}

std::string ConfigurationLabel(const ResultRow& row) {
  const std::string settings = SettingsLabel(row);
  return DegreesLabel(row) + (settings.empty() ? "" : " " + settings);
}

std::string ConfigurationLabel(const TrialConfig& config) {
  const nlohmann::json computation = ComputationJson(config);
  const std::string degrees = DegreesAboveOne(config);
  std::string label = degrees.empty() ? "1 rank" : degrees;
  if (const auto custom = computation.find("custom"); custom != computation.end())
    if (const std::string axes = AxesLabel(*custom); !axes.empty()) label += " " + axes;
  const std::string settings = LabelOfSettings(computation, {});
  return label + (settings.empty() ? "" : " " + settings);
}

bool HasStepCache(const ResultRow& row) {
  const nlohmann::json computation = RowComputation(row);
  const auto cache = computation.find("cache");
  return cache != computation.end() && !cache->is_null() && *cache != "none";
}

int VaeParallelOf(const ResultRow& row) {
  const nlohmann::json computation = RowComputation(row);
  const auto split = computation.find("vae_parallel");
  return split != computation.end() && split->is_number_integer() ? std::max(1, split->get<int>())
                                                                  : 1;
}

namespace {

// Settings that approximate the computation or skip work: the reference trial has them at
// their defaults (their roles in experiments/trial_fields.h, which ReferenceConfig reads too).
const std::vector<std::string>& ApproximatingFields() {
  static const std::vector<std::string> fields =
      FieldsWithRole({FieldRole::kApproximates, FieldRole::kSkipsWork});
  return fields;
}

// SerialKey with the approximating settings at their defaults: the exact computation's.
std::string ReferenceKey(const ResultRow& row) {
  nlohmann::json identity = WithoutSeed(row, /*drop_parallel=*/true);
  for (const std::string& field : ApproximatingFields()) identity.erase(field);
  return fmt::format("{}|{}", row.profile_blocks, identity.dump());
}

}  // namespace

OneRankBaselines::OneRankBaselines(const std::vector<ResultRow>& group) {
  for (const ResultRow& candidate : group) {
    if (candidate.world_size != 1 || !candidate.measured()) continue;
    const std::string same = SerialKey(candidate);
    same_[same].push_back(&candidate);
    if (ReferenceKey(candidate) == same) exact_[same].push_back(&candidate);
  }
}

const ResultRow* OneRankBaselines::For(const ResultRow& row) const {
  if (const ResultRow* exact = Pick(exact_, ReferenceKey(row), row)) return exact;
  return Pick(same_, SerialKey(row), row);
}

std::vector<std::string> SettingsApartFrom(const ResultRow& row, const ResultRow& baseline) {
  const nlohmann::json mine = RowIdentity(row), theirs = RowIdentity(baseline);
  std::vector<std::string> apart;
  for (const std::string& field : ApproximatingFields())
    if (mine.value(field, nlohmann::json()) != theirs.value(field, nlohmann::json()))
      apart.push_back(field);
  return apart;
}

const ResultRow* OneRankBaselines::Pick(
    const std::map<std::string, std::vector<const ResultRow*>>& candidates, const std::string& key,
    const ResultRow& row) const {
  auto found = candidates.find(key);
  if (found == candidates.end()) return nullptr;
  const ResultRow* best = nullptr;
  for (const ResultRow* candidate : found->second) {
    if (candidate->campaign == row.campaign) return candidate;
    if (!best || candidate->campaign > best->campaign) best = candidate;
  }
  return best;
}

}  // namespace ditbench
