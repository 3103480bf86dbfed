#include "experiments/trial_identity.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "base/json_append.h"
#include "experiments/trial_fields.h"

namespace ditbench {
namespace {

// Key format v2's frozen identity defaults, each its field's row's (experiments/trial_fields.h).
// Hashed rather than ordered: the planner looks up every field of every trial's computation.
const std::unordered_map<std::string, nlohmann::json>& IdentityDefaults() {
  static const std::unordered_map<std::string, nlohmann::json> defaults = [] {
    std::unordered_map<std::string, nlohmann::json> all;
    for (const TrialField& field : TrialFields())
      if (field.identity_default) all.emplace(field.key, *field.identity_default);
    return all;
  }();
  return defaults;
}

}  // namespace

nlohmann::json ComputationJson(const TrialConfig& c) {
  // Each field constructed in place in the object's map (TrialKey runs this for every trial a
  // plan expands).
  nlohmann::json::object_t computation;
  for (const TrialField& field : TrialFields())
    if (field.role != FieldRole::kPolicy)
      if (auto value = field.value(c)) computation.emplace(field.key, std::move(*value));
  return nlohmann::json(std::move(computation));
}

void AppendCanonicalJson(const TrialConfig& c, JsonAppender& json, std::string& out,
                         unsigned indent, unsigned depth) {
  // The table is sorted by key, policy fields among the others: CanonicalJson's order.
  out += '{';
  bool first = true;
  for (const TrialField& field : TrialFields()) {
    if (auto value = field.value(c)) {
      json.Member(field.key, *value, indent, depth, first);
      first = false;
    }
  }
  json.CloseObject(depth, !first);
}

nlohmann::json PolicyJson(const TrialConfig& c) {
  nlohmann::json policy = nlohmann::json::object();
  AddPolicyJson(c, policy);
  return policy;
}

void AddPolicyJson(const TrialConfig& c, nlohmann::json& into) {
  auto& object = into.get_ref<nlohmann::json::object_t&>();
  for (const TrialField& field : TrialFields())
    if (field.role == FieldRole::kPolicy)
      if (auto value = field.value(c)) object.emplace(field.key, std::move(*value));
}

namespace {

// IdentityDefault without copying the default: nullptr where the field has none.
const nlohmann::json* DefaultOf(const std::string& field, const nlohmann::json& computation) {
  if (const TrialField* row = FieldByKey(field); row && !row->identity_default_field.empty()) {
    const auto it = computation.find(row->identity_default_field);
    return it != computation.end() ? &*it : DefaultOf(row->identity_default_field, computation);
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
  // IdentityDump(ComputationJson(config)) without building the computation: each field's
  // value from its row, in the table's (sorted) order, left out at its identity default.
  std::string text = "{";
  JsonAppender json(text);
  for (const TrialField& field : TrialFields()) {
    if (field.role == FieldRole::kPolicy) continue;
    const std::optional<nlohmann::json> value = field.value(config);
    if (!value) continue;
    std::optional<nlohmann::json> fallback = field.identity_default;
    if (!field.identity_default_field.empty()) {
      const TrialField& other = *FieldByKey(field.identity_default_field);
      fallback = other.value(config);
      if (!fallback) fallback = other.identity_default;
    }
    if (fallback && *value == *fallback) continue;
    if (text.size() > 1) text += ',';
    AppendName(field.key, json, text);
    text += ':';
    json.Compact(KnownByDigest(field.key, *value) ? ServeIdentity(*value) : *value);
  }
  return text += '}';
}

std::string KeyOfComputation(const nlohmann::json& computation) {
  return Sha256Hex(IdentityDump(computation)).substr(0, 16);
}

}  // namespace ditbench
