#include "experiments/sweep_spec.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "model_zoo/model_config.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

// A YAML scalar as JSON: integer, then float, then boolean, else string. Quoted scalars
// (tag "!") stay strings.
Json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;
  std::int64_t i = 0;
  auto [iend, iec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (iec == std::errc() && iend == s.data() + s.size() && !s.empty()) return i;
  double d = 0;
  auto [dend, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (dec == std::errc() && dend == s.data() + s.size() && !s.empty()) return d;
  if (s == "true") return true;
  if (s == "false") return false;
  return s;
}

Json NodeToJson(const YAML::Node& node, int depth = 0) {
  if (depth > 32) throw std::invalid_argument("nesting deeper than 32 levels");
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(NodeToJson(item, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node)
        out[kv.first.Scalar()] = NodeToJson(kv.second, depth + 1);
      return out;
    }
    default:
      return nullptr;
  }
}

bool AsInt(const Json& v, int lo, int hi, int* out) {
  if (!v.is_number_integer()) return false;
  auto i = v.get<std::int64_t>();
  if (i < lo || i > hi) return false;
  *out = static_cast<int>(i);
  return true;
}

bool AsNumber(const Json& v, double lo, double hi, double* out) {
  if (!v.is_number()) return false;
  double d = v.get<double>();
  if (!(d >= lo && d <= hi)) return false;
  *out = d;
  return true;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

using Setter = std::function<bool(TrialConfig&, const Json&, std::string*)>;

Setter IntSetter(int TrialConfig::*field, int lo, int hi) {
  return [=](TrialConfig& c, const Json& v, std::string* expected) {
    if (AsInt(v, lo, hi, &(c.*field))) return true;
    *expected = fmt::format("an integer from {} to {}", lo, hi);
    return false;
  };
}

bool SetRepeats(TrialConfig& c, const Json& v, std::string* expected) {
  int n = 0;
  if (AsInt(v, 1, 1000000, &n)) {
    c.repeats = Repeats{n, n, 0.0, 0.0};
    return true;
  }
  *expected =
      "a positive integer or a map {min, max, target_rel_ci, max_seconds} with 1 <= min <= max";
  if (!v.is_object()) return false;
  Repeats r{5, 5, 0.0, 0.0};
  bool has_max = false;
  for (const auto& [key, value] : v.items()) {
    if (key == "min") {
      if (!AsInt(value, 1, 1000000, &r.min)) return false;
    } else if (key == "max") {
      if (!AsInt(value, 1, 1000000, &r.max)) return false;
      has_max = true;
    } else if (key == "target_rel_ci") {
      if (!AsNumber(value, 0.0, 1.0, &r.target_rel_ci)) return false;
    } else if (key == "max_seconds") {
      if (!ParseDuration(value, &r.max_seconds)) return false;
    } else {
      *expected = fmt::format("repeats keys min, max, target_rel_ci, max_seconds, not '{}'", key);
      return false;
    }
  }
  if (!has_max) r.max = std::max(r.min, r.max);
  if (r.min > r.max) return false;
  c.repeats = r;
  return true;
}

const std::map<std::string, Setter>& Setters() {
  static const std::map<std::string, Setter> setters = {
      {"model",
       [](TrialConfig& c, const Json& v, std::string* expected) {
         if (v.is_string() && FindModelPreset(v.get<std::string>())) {
           c.model = v.get<std::string>();
           return true;
         }
         *expected = "a model preset: " + Join(ModelPresetNames());
         if (v.is_string()) {
           auto guess = DidYouMean(v.get<std::string>(), ModelPresetNames());
           if (!guess.empty()) *expected += fmt::format("; did you mean '{}'?", guess);
         }
         return false;
       }},
      {"resolution", IntSetter(&TrialConfig::resolution, 16, 16384)},
      {"precision",
       [](TrialConfig& c, const Json& v, std::string* expected) {
         auto p = v.is_string() ? ParsePrecision(v.get<std::string>()) : std::nullopt;
         if (p) c.precision = *p;
         *expected = "one of fp32, tf32, bf16, fp16";
         return p.has_value();
       }},
      {"scope",
       [](TrialConfig& c, const Json& v, std::string* expected) {
         auto s = v.is_string() ? ParseScope(v.get<std::string>()) : std::nullopt;
         if (s) c.scope = *s;
         *expected = "one of forward, denoise, pipeline";
         return s.has_value();
       }},
      {"batch", IntSetter(&TrialConfig::batch, 1, 4096)},
      {"steps", IntSetter(&TrialConfig::steps, 1, 10000)},
      {"warmup", IntSetter(&TrialConfig::warmup, 0, 10000)},
      {"repeats", SetRepeats},
      {"timeout",
       [](TrialConfig& c, const Json& v, std::string* expected) {
         double s = 0;
         *expected = "a duration such as 90s, 30m or 2h";
         if (!ParseDuration(v, &s) || s <= 0) return false;
         c.timeout_s = s;
         return true;
       }},
      {"seed",
       [](TrialConfig& c, const Json& v, std::string* expected) {
         *expected = "an integer";
         if (!v.is_number_integer()) return false;
         c.seed = v.get<std::int64_t>();
         return true;
       }},
      {"ulysses", IntSetter(&TrialConfig::ulysses, 1, 1024)},
      {"ring", IntSetter(&TrialConfig::ring, 1, 1024)},
      {"pipefusion", IntSetter(&TrialConfig::pipefusion, 1, 1024)},
      {"cfg", IntSetter(&TrialConfig::cfg, 1, 2)},
      {"dp", IntSetter(&TrialConfig::dp, 1, 1024)},
  };
  return setters;
}

const std::vector<std::string> kTopLevelKeys = {"name", "description", "workload", "defaults",
                                                "matrix"};

// Collects diagnostics for one file.
class Reporter {
 public:
  explicit Reporter(std::string file) : file_(std::move(file)) {}
  void Error(const YAML::Mark& mark, std::string key, std::string message) {
    // yaml-cpp marks are 0-based; a null mark (-1) becomes line 1, column 1.
    errors_.push_back({file_, std::max(mark.line, 0) + 1, std::max(mark.column, 0) + 1,
                       std::move(key), std::move(message)});
  }
  std::vector<SpecDiagnostic>& errors() { return errors_; }

 private:
  std::string file_;
  std::vector<SpecDiagnostic> errors_;
};

void UnknownKey(Reporter& r, const YAML::Node& key_node, const std::string& where,
                const std::vector<std::string>& allowed) {
  const std::string key = key_node.Scalar();
  std::string message = fmt::format("unknown key in {}; expected one of: {}", where, Join(allowed));
  auto guess = DidYouMean(key, allowed);
  if (!guess.empty()) message += fmt::format("; did you mean '{}'?", guess);
  r.Error(key_node.Mark(), key, message);
}

void ParseDefaults(const YAML::Node& node, SweepSpec& spec, Reporter& r) {
  if (!node.IsMap()) {
    r.Error(node.Mark(), "defaults", "expected a map of trial keys to values");
    return;
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (!Setters().contains(key)) {
      UnknownKey(r, kv.first, "defaults", TrialKeys());
      continue;
    }
    std::string expected;
    if (!ApplySetting(spec.defaults, key, NodeToJson(kv.second), &expected))
      r.Error(kv.second.Mark(), "defaults." + key, "expected " + expected);
  }
}

void ParseMatrix(const YAML::Node& node, SweepSpec& spec, Reporter& r) {
  if (!node.IsMap()) {
    r.Error(node.Mark(), "matrix", "expected a map of trial keys to lists of values");
    return;
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (!Setters().contains(key)) {
      UnknownKey(r, kv.first, "matrix", TrialKeys());
      continue;
    }
    Axis axis{key, {}};
    std::vector<YAML::Node> items;
    if (kv.second.IsSequence()) {
      for (const auto& item : kv.second) items.push_back(item);
    } else {
      items.push_back(kv.second);  // a single value is a one-point axis
    }
    if (items.empty()) {
      r.Error(kv.second.Mark(), "matrix." + key, "expected a non-empty list of values");
      continue;
    }
    for (const auto& item : items) {
      Json value = NodeToJson(item);
      TrialConfig scratch = spec.defaults;
      std::string expected;
      if (!ApplySetting(scratch, key, value, &expected)) {
        r.Error(item.Mark(), "matrix." + key, "expected " + expected);
        continue;
      }
      axis.values.push_back({value, item.Mark().line + 1, item.Mark().column + 1});
    }
    spec.matrix.push_back(std::move(axis));
  }
}

std::string ScalarOrError(const YAML::Node& node, const std::string& key, Reporter& r) {
  if (!node.IsScalar()) {
    r.Error(node.Mark(), key, "expected a string");
    return "";
  }
  return node.Scalar();
}

}  // namespace

std::string SpecDiagnostic::ToString() const {
  if (key.empty()) return fmt::format("{}:{}:{}: {}", file, line, column, message);
  return fmt::format("{}:{}:{}: '{}': {}", file, line, column, key, message);
}

const std::vector<std::string>& TrialKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [name, setter] : Setters()) k.push_back(name);
    return k;
  }();
  return keys;
}

bool ApplySetting(TrialConfig& config, const std::string& key, const Json& value,
                  std::string* expected) {
  auto it = Setters().find(key);
  if (it == Setters().end()) {
    *expected = "a known key";
    return false;
  }
  return it->second(config, value, expected);
}

bool ParseDuration(const Json& value, double* seconds) {
  if (value.is_number()) {
    *seconds = value.get<double>();
    return *seconds >= 0;
  }
  if (!value.is_string()) return false;
  const std::string s = value.get<std::string>();
  if (s.size() < 2) return false;
  double scale = 0;
  switch (s.back()) {
    case 's': scale = 1; break;
    case 'm': scale = 60; break;
    case 'h': scale = 3600; break;
    default: return false;
  }
  double number = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size() - 1, number);
  if (ec != std::errc() || end != s.data() + s.size() - 1 || number < 0) return false;
  *seconds = number * scale;
  return true;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t next = std::min({row[j] + 1, row[j - 1] + 1,
                                     diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = row[j];
        row[j] = next;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::size_t d = distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

ParseResult ParseSweep(const std::string& text, const std::filesystem::path& path) {
  ParseResult result;
  SweepSpec& spec = result.spec;
  spec.path = path;
  spec.text = text;
  Reporter r(path.string());
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      r.Error(root.Mark(), "", "expected a map with keys: " + Join(kTopLevelKeys));
    } else {
      // Matrix values are checked against the defaults, so the matrix is read last.
      YAML::Node matrix;
      bool has_matrix = false;
      for (const auto& kv : root) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
        if (key == "name") {
          spec.name = ScalarOrError(kv.second, key, r);
        } else if (key == "description") {
          spec.description = ScalarOrError(kv.second, key, r);
        } else if (key == "workload") {
          spec.workload = ScalarOrError(kv.second, key, r);
          if (spec.workload != "dit")
            r.Error(kv.second.Mark(), key, "expected 'dit' (the built-in DiT worker)");
        } else if (key == "defaults") {
          ParseDefaults(kv.second, spec, r);
        } else if (key == "matrix") {
          matrix = kv.second;
          has_matrix = true;
        } else {
          UnknownKey(r, kv.first, "the sweep", kTopLevelKeys);
        }
      }
      if (has_matrix) ParseMatrix(matrix, spec, r);
      if (spec.name.empty() && !root["name"])
        r.Error(root.Mark(), "name", "missing required key 'name' (the campaign name)");
    }
  } catch (const YAML::Exception& e) {
    r.Error(e.mark, "", "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    r.Error(YAML::Mark::null_mark(), "", std::string("invalid sweep: ") + e.what());
  }
  result.errors = std::move(r.errors());
  return result;
}

ParseResult ParseSweepFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult result;
    result.errors.push_back({path.string(), 0, 0, "", "cannot read the sweep file"});
    return result;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseSweep(buffer.str(), path);
}

std::vector<TrialConfig> ExpandTrials(const SweepSpec& spec) {
  std::vector<TrialConfig> trials = {spec.defaults};
  for (const auto& axis : spec.matrix) {
    std::vector<TrialConfig> next;
    next.reserve(trials.size() * axis.values.size());
    for (const auto& base : trials) {
      for (const auto& value : axis.values) {
        TrialConfig t = base;
        std::string unused;
        ApplySetting(t, axis.key, value.value, &unused);  // checked while parsing
        next.push_back(std::move(t));
      }
    }
    trials = std::move(next);
  }
  return trials;
}

}  // namespace ditbench
