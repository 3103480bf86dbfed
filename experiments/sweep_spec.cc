#include "experiments/sweep_spec.h"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "base/did_you_mean.h"
#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "experiments/arrivals.h"
#include "experiments/command_line.h"
#include "experiments/constraint.h"
#include "experiments/sweep_engine.h"
#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec_file.h"
#include "experiments/trial_settings.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kTopLevelKeys = {
    "name",    "description", "workload", "command", "replicates", "on_oom",  "search", "profile",
    "quality", "defaults",    "matrix",   "zip",     "include",    "exclude", "where",  "engine"};

// Reads one file's sections, collecting every diagnostic.
class SpecReader {
 public:
  SpecReader(SweepSpec& spec, std::string file) : spec_(spec), file_(std::move(file)) {}

  void Read(const YAML::Node& root) {
    if (!root.IsMap()) {
      Error(root.Mark(), "",
            fmt::format("expected a map with keys: {}", fmt::join(kTopLevelKeys, ", ")));
      return;
    }
    // Values in the matrix, zip, include and exclude are checked against the defaults, so the
    // defaults are read first wherever they appear.
    std::map<std::string, YAML::Node> sections;
    for (const auto& kv : root) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key) == kTopLevelKeys.end()) {
        UnknownKey(kv.first, "the sweep", kTopLevelKeys);
        continue;
      }
      if (sections.contains(key)) continue;  // reported by ReportDuplicateKeys
      sections[key] = kv.second;
    }
    if (sections.contains("name")) {
      spec_.name = Text(sections["name"], "name");
      if (!IsPrintableName(spec_.name))
        Error(sections["name"].Mark(), "name",
              "expected a non-empty name of printable characters (no control characters)");
    } else
      Error(root.Mark(), "name", "missing required key 'name' (the campaign name)");
    if (sections.contains("description"))
      spec_.description = Text(sections["description"], "description");
    if (sections.contains("workload")) {
      const std::string name = Text(sections["workload"], "workload");
      if (const auto workload = ParseWorkload(name))
        spec_.workload = *workload;
      else
        Error(sections["workload"].Mark(), "workload", "expected " + WorkloadChoices());
      spec_.defaults.workload = spec_.workload;  // part of every trial's identity
    }
    if (sections.contains("command"))
      ReadCommand(sections["command"]);
    else if (RunsProgram())
      Error(root.Mark(), "command",
            fmt::format("missing required key 'command' for workload '{}' (the program and its "
                        "arguments, e.g. [python3, bench.py, --steps, \"{{steps}}\"])",
                        WorkloadName(spec_.workload)));
    if (auto problem =
            ReadEngineSection(spec_.workload, sections, root, converter_, &spec_.defaults))
      Error(problem->mark, "engine", problem->message);
    if (sections.contains("replicates")) ReadReplicates(sections["replicates"]);
    if (sections.contains("on_oom")) {
      const std::string policy = Text(sections["on_oom"], "on_oom");
      if (policy == "skip_larger")
        spec_.skip_larger_after_oom = true;
      else if (policy != "run")
        Error(sections["on_oom"].Mark(), "on_oom",
              "expected 'run' (every trial runs) or 'skip_larger' (trials at least as large as "
              "one that ran out of memory are skipped)");
    }
    if (sections.contains("search")) ReadSearch(sections["search"]);
    if (sections.contains("profile")) {
      // Measurement policy of every trial (outside the key), carried to the ranks in trial.json.
      const std::string profile = Text(sections["profile"], "profile");
      if (!sections["profile"].IsScalar()) {
        // reported by Text
      } else if (profile == kProfileTrace || profile == kProfileNone)
        spec_.defaults.profile_trace = profile == kProfileTrace;
      else
        Error(sections["profile"].Mark(), "profile", std::string("expected ") + kProfileExpected);
    }
    if (sections.contains("quality")) ReadQuality(sections["quality"]);
    if (spec_.halving_keep > 0 && spec_.replicates > 1)
      Error(sections["search"].Mark(), "search",
            "a halving search measures each round as a launch of its own: leave out "
            "'replicates' (or use it without a search)");
    if (sections.contains("defaults")) ReadDefaults(sections["defaults"]);
    if (sections.contains("matrix")) ReadMatrix(sections["matrix"]);
    if (sections.contains("zip")) ReadZip(sections["zip"]);
    if (sections.contains("include")) ReadPoints(sections["include"], "include", spec_.include);
    if (sections.contains("exclude")) ReadPoints(sections["exclude"], "exclude", spec_.exclude);
    if (sections.contains("where")) ReadWhere(sections["where"]);
    CheckAxesAreDistinct();
    CheckPlaceholders();
    if (auto bad = AttachedAxisProblem(spec_))
      errors_.push_back({file_, bad->first.line, bad->first.column, bad->first.key, bad->second});
    if (UnfilteredTrialCount(spec_) > kMaxTrials)
      Error(root.Mark(), "matrix",
            fmt::format("the sweep expands to {} trials; at most {} are allowed per sweep",
                        UnfilteredTrialCountText(spec_), kMaxTrials));
  }

  // A key given twice anywhere in the document is an error at its second occurrence.
  void ReportDuplicateKeys(const YAML::Node& node) {
    ditbench::ReportDuplicateKeys(
        node, [this](const YAML::Mark& mark, std::string key, std::string message) {
          Error(mark, std::move(key), std::move(message));
        });
  }

  void Error(const YAML::Mark& mark, std::string key, std::string message) {
    // yaml-cpp marks are 0-based; a null mark (-1) becomes line 1, column 1.
    errors_.push_back({file_, std::max(mark.line, 0) + 1, std::max(mark.column, 0) + 1,
                       std::move(key), std::move(message)});
  }
  std::vector<SpecDiagnostic>& errors() { return errors_; }

  // Bytes that are not UTF-8 anywhere in `text` not already reported at a value (a comment, a
  // key): one located error at the first of them.
  void CheckUtf8(std::string_view text) {
    const std::optional<std::size_t> bad = FirstInvalidUtf8(text);
    if (!bad || utf8_reported_) return;
    Error(MarkOfByte(text, *bad), "",
          fmt::format("byte 0x{:02x} is not valid UTF-8; expected a file written in "
                      "UTF-8",
                      static_cast<unsigned char>(text[*bad])));
  }

 private:
  void UnknownKey(const YAML::Node& key_node, const std::string& where,
                  const std::vector<std::string>& allowed) {
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "(not a string)";
    std::string message =
        fmt::format("unknown key in {}; expected one of: {}", where, fmt::join(allowed, ", "));
    auto guess = DidYouMean(key, allowed);
    if (!guess.empty()) message += fmt::format("; did you mean '{}'?", guess);
    Error(key_node.Mark(), key, message);
  }

  static bool IsPrintableName(const std::string& name) {
    if (name.empty()) return false;
    for (unsigned char ch : name)
      if (ch < 0x20 || ch == 0x7f) return false;
    return true;
  }

  std::string Text(const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar()) {
      Error(node.Mark(), key, "expected a string");
      return "";
    }
    return node.Scalar();
  }

  // Checks one value of a trial key against the defaults; records it when valid.
  bool Check(const YAML::Node& key_node, const YAML::Node& value, const std::string& where,
             Setting* out) {
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "";
    if (std::find(TrialKeys().begin(), TrialKeys().end(), key) == TrialKeys().end() &&
        !IsCustomAxis(key_node, where)) {
      return false;
    }
    Json json = converter_.Convert(value);
    if (!Utf8Text(json)) {
      Error(value.Mark(), where + "." + key,
            "not valid UTF-8 text; expected a value written in UTF-8");
      utf8_reported_ = true;
      refused_keys_.insert(key);
      return false;
    }
    if (key == "model") AnchorWeightFolders(json);
    if (key == "serve") {
      if (auto problem = AnchorTrace(json)) {
        const YAML::Node trace = value.IsMap() ? value["trace"] : YAML::Node();
        Error(trace ? trace.Mark() : value.Mark(), where + "." + key + ".trace", *problem);
        refused_keys_.insert(key);
        return false;
      }
    }
    TrialConfig scratch = spec_.defaults;
    std::string expected;
    if (!ApplySetting(scratch, key, json, &expected)) {
      Error(value.Mark(), where + "." + key, "expected " + expected);
      refused_keys_.insert(key);
      return false;
    }
    *out = {key, std::move(json), value.Mark().line + 1, value.Mark().column + 1};
    return true;
  }

  // A relative `weights` / `vae_weights` folder of a model value is taken from the sweep file's
  // folder (as a command workload's program is), not from wherever `ditbench` was started.
  void AnchorWeightFolders(Json& model) const {
    if (!model.is_object()) return;
    for (const char* key : {"weights", "vae_weights"}) {
      if (!model.contains(key) || !model[key].is_string()) continue;
      const std::filesystem::path folder = model[key].get<std::string>();
      if (folder.empty() || folder.is_absolute()) continue;
      model[key] = (SweepFolder() / folder).lexically_normal().string();
    }
  }

  // A relative `serve.trace` is taken from the sweep file's folder, as a weights folder is
  // (LocateArrivalTrace), and its bytes' SHA-256 becomes the load's `trace_sha256`, which the
  // trial key holds instead of the path. What is wrong, or nullopt.
  std::optional<std::string> AnchorTrace(Json& serve) const {
    if (!serve.is_object() || !serve.contains("trace") || !serve["trace"].is_string() ||
        serve["trace"].get<std::string>().empty())
      return std::nullopt;  // ParseServeLoad says what was expected
    std::filesystem::path trace;
    std::string sha256;
    auto problem =
        LocateArrivalTrace(serve["trace"].get<std::string>(), SweepFolder(), &trace, &sha256);
    if (problem) return problem;
    serve["trace"] = trace.string();
    serve["trace_sha256"] = sha256;
    return std::nullopt;
  }

  // The folder relative paths of a sweep are taken from: the sweep file's own.
  std::filesystem::path SweepFolder() const {
    std::error_code ec;
    return spec_.path.empty() ? std::filesystem::current_path(ec)
                              : std::filesystem::absolute(spec_.path, ec).parent_path();
  }

  // Whether the sweep's workload starts its own program: only then does it give a `command`
  // and may it have custom axes.
  bool RunsProgram() const { return TraitsOf(spec_.workload).launch == WorkloadLaunch::kProgram; }

  // Whether `key_node` names a custom axis. Only a `command` workload has them; a name one
  // typo away from a built-in key is taken for that typo, not for a new axis. Reports why not.
  bool IsCustomAxis(const YAML::Node& key_node, const std::string& where) {
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : "";
    if (!RunsProgram()) {
      UnknownKey(key_node, where, TrialKeys());
      return false;
    }
    for (const std::string& builtin : TrialKeys())
      if (EditDistance(key, builtin) == 1) {
        Error(key_node.Mark(), key,
              fmt::format("unknown key in {}; did you mean '{}'? (a custom axis may not be one "
                          "edit away from a built-in key: pick a more distinct name)",
                          where, builtin));
        return false;
      }
    if (!IsCustomAxisName(key)) {
      Error(key_node.Mark(), key,
            fmt::format("not a valid custom axis name in {}: expected a letter or '_', then "
                        "letters, digits or '_' (at most 64), not a reserved name",
                        where));
      return false;
    }
    return true;
  }

  // `command`: a non-empty list of strings (numbers are taken as their text).
  void ReadCommand(const YAML::Node& node) {
    if (!RunsProgram()) {
      Error(node.Mark(), "command", "only a sweep with 'workload: command' runs a command");
      return;
    }
    if (!node.IsSequence() || node.size() == 0) {
      Error(node.Mark(), "command",
            "expected a non-empty list: the program, then its arguments, e.g. [python3, "
            "bench.py, --steps, \"{steps}\"]");
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const YAML::Node item = node[i];
      const std::string key = fmt::format("command[{}]", i);
      if (!item.IsScalar() || item.Scalar().empty()) {
        Error(item.Mark(), key, "expected a non-empty string");
        continue;
      }
      spec_.command.push_back({key, item.Scalar(), item.Mark().line + 1, item.Mark().column + 1});
      spec_.defaults.command.push_back(item.Scalar());
    }
  }

  // Every {placeholder} of the command names a field each trial has: a built-in trial key,
  // world_size, or a custom axis set in `defaults`, the matrix or a zip group (one set only
  // in some `include` points would leave the other trials without a value).
  void CheckPlaceholders() {
    std::set<std::string> known(BuiltinPlaceholders().begin(), BuiltinPlaceholders().end());
    std::set<std::string> custom;
    for (const auto& [name, value] : spec_.defaults.custom) custom.insert(name);
    for (const auto& axis : spec_.matrix) custom.insert(axis.key);
    for (const auto& group : spec_.zip)
      for (const auto& axis : group.axes) custom.insert(axis.key);
    std::set<std::string> only_included;
    for (const auto& point : spec_.include)
      for (const auto& s : point)
        if (!known.contains(s.key) && !custom.contains(s.key)) only_included.insert(s.key);
    std::vector<std::string> expected(known.begin(), known.end());
    expected.insert(expected.end(), custom.begin(), custom.end());
    for (const Setting& arg : spec_.command) {
      const std::string text = arg.value.get<std::string>();
      std::vector<std::string> names;
      std::string problem;
      if (!ParseCommandTemplate(text, &names, &problem)) {
        errors_.push_back({file_, arg.line, arg.column, arg.key, problem});
        continue;
      }
      for (const std::string& name : names) {
        // A key whose value was refused is reported there, not again as unknown here.
        if (known.contains(name) || custom.contains(name) || refused_keys_.contains(name)) continue;
        std::string message;
        if (only_included.contains(name)) {
          message = fmt::format(
              "placeholder '{{{}}}' is set only in some 'include' points; "
              "give it a value in 'defaults' so that every trial has one",
              name);
        } else {
          message = fmt::format(
              "unknown placeholder '{{{}}}'; expected a trial field or an "
              "axis of this sweep: {}",
              name,
              fmt::join(custom.empty() ? expected
                                       : std::vector<std::string>(custom.begin(), custom.end()),
                        ", "));
          if (!custom.empty()) message += " (or a built-in key such as steps, resolution)";
          auto guess = DidYouMean(name, expected);
          if (!guess.empty()) message += fmt::format("; did you mean '{}'?", guess);
        }
        errors_.push_back({file_, arg.line, arg.column, arg.key, message});
      }
    }
  }

  // `replicates: N`: launches per trial (measurement policy, outside the trial key).
  void ReadReplicates(const YAML::Node& node) {
    const Json value = node.IsScalar() ? ScalarJson(node) : Json();
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
        value.get<std::int64_t>() > kMaxReplicates) {
      Error(node.Mark(), "replicates",
            fmt::format("expected an integer from 1 to {} (separate launches of every trial)",
                        kMaxReplicates));
      return;
    }
    spec_.replicates = static_cast<int>(value.get<std::int64_t>());
  }

  // `search: {strategy: halving, keep: F}` with 0 < F < 1.
  void ReadSearch(const YAML::Node& node) {
    const std::string expected =
        "expected {strategy: halving, keep: F} with 0 < F < 1 (the fraction of each group "
        "re-measured in the next round)";
    Json value;
    try {
      value = converter_.Convert(node);
    } catch (const std::exception&) {
    }
    if (!value.is_object() || value.value("strategy", Json()) != "halving" ||
        !value.contains("keep") || !value["keep"].is_number() || value.size() != 2) {
      Error(node.Mark(), "search", expected);
      return;
    }
    const double keep = value["keep"].get<double>();
    if (!(keep > 0 && keep < 1)) {
      Error(node.Mark(), "search", expected);
      return;
    }
    spec_.halving_keep = keep;
  }

  // `quality: {max_output_error: 1e-3, min_psnr: 35, min_ssim: 0.9}`: the gates every trial's
  // output must pass (experiments/quality_gate.h); measurement policy, outside the trial key.
  void ReadQuality(const YAML::Node& node) {
    if (!node.IsMap() || node.size() == 0) {
      Error(node.Mark(), "quality",
            "expected a map of quality gates, e.g. {max_output_error: 1e-3, min_psnr: 35}");
      return;
    }
    const std::vector<std::string> gates(std::begin(kQualityGateKeys), std::end(kQualityGateKeys));
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find(gates.begin(), gates.end(), key) == gates.end()) {
        UnknownKey(kv.first, "quality", gates);
        continue;
      }
      std::string expected = QualityGateExpected(key);  // a trial key is text, digits or not:
      const Json value = key == "reference" ? Json(kv.second.Scalar()) : ScalarJson(kv.second);
      if (!kv.second.IsScalar() || !SetQualityGate(spec_.defaults.quality, key, value, &expected))
        Error(kv.second.Mark(), "quality." + key, "expected " + expected);
    }
  }

  Json ScalarJson(const YAML::Node& node) {
    try {
      return converter_.Convert(node);
    } catch (const std::exception&) {
      return Json();
    }
  }

  void ReadDefaults(const YAML::Node& node) {
    if (!node.IsMap()) {
      Error(node.Mark(), "defaults", "expected a map of trial keys to values");
      return;
    }
    for (const auto& kv : node) {
      Setting s;
      if (!Check(kv.first, kv.second, "defaults", &s)) continue;
      std::string unused;
      ApplySetting(spec_.defaults, s.key, s.value, &unused);
    }
  }

  // A map of key -> list of values (a single value is a one-point axis).
  std::vector<Axis> ReadAxes(const YAML::Node& node, const std::string& where) {
    std::vector<Axis> axes;
    if (!node.IsMap()) {
      Error(node.Mark(), where, "expected a map of trial keys to lists of values");
      return axes;
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      Axis axis{key, {}};
      std::vector<YAML::Node> items;
      if (kv.second.IsSequence()) {
        for (const auto& item : kv.second) items.push_back(item);
      } else {
        items.push_back(kv.second);
      }
      if (items.empty()) {
        Error(kv.second.Mark(), where + "." + key, "expected a non-empty list of values");
        continue;
      }
      bool ok = true;
      for (const auto& item : items) {
        Setting s;
        if (!Check(kv.first, item, where, &s)) {
          ok = false;
          if (!axis.values.empty() ||
              std::find(TrialKeys().begin(), TrialKeys().end(), key) == TrialKeys().end())
            break;  // an unknown key is reported once, not once per value
          continue;
        }
        axis.values.push_back(std::move(s));
      }
      if (ok) axes.push_back(std::move(axis));
    }
    return axes;
  }

  void ReadMatrix(const YAML::Node& node) { spec_.matrix = ReadAxes(node, "matrix"); }

  void ReadZip(const YAML::Node& node) {
    if (!node.IsSequence()) {
      Error(node.Mark(), "zip", "expected a list of maps, each of equal-length lists");
      return;
    }
    for (const auto& group_node : node) {
      ZipGroup group{ReadAxes(group_node, "zip")};
      if (group.axes.empty()) continue;
      bool equal = true;
      for (const auto& axis : group.axes)
        if (axis.values.size() != group.axes[0].values.size()) equal = false;
      if (!equal) {
        std::string lengths;
        for (const auto& axis : group.axes)
          lengths +=
              fmt::format("{}{}={}", lengths.empty() ? "" : ", ", axis.key, axis.values.size());
        Error(group_node.Mark(), "zip",
              "lists in one zip group must have equal lengths; got " + lengths);
        continue;
      }
      spec_.zip.push_back(std::move(group));
    }
  }

  void ReadPoints(const YAML::Node& node, const std::string& where,
                  std::vector<std::vector<Setting>>& points) {
    if (!node.IsSequence()) {
      Error(node.Mark(), where, "expected a list of maps from trial keys to single values");
      return;
    }
    for (const auto& point_node : node) {
      if (!point_node.IsMap() || point_node.size() == 0) {
        Error(point_node.Mark(), where, "expected a non-empty map from trial keys to values");
        continue;
      }
      std::vector<Setting> point;
      bool ok = true;
      for (const auto& kv : point_node) {
        Setting s;
        if (kv.second.IsSequence()) {
          Error(kv.second.Mark(), where + "." + (kv.first.IsScalar() ? kv.first.Scalar() : ""),
                "expected a single value (use the matrix for lists)");
          ok = false;
          continue;
        }
        if (!Check(kv.first, kv.second, where, &s)) {
          ok = false;
          continue;
        }
        point.push_back(std::move(s));
      }
      if (ok) points.push_back(std::move(point));
    }
  }

  void ReadWhere(const YAML::Node& node) {
    std::vector<YAML::Node> items;
    if (node.IsSequence()) {
      for (const auto& item : node) items.push_back(item);
    } else {
      items.push_back(node);
    }
    for (const auto& item : items) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        Error(item.Mark(), "where", "expected an expression such as \"ulysses * ring <= gpus\"");
        continue;
      }
      Constraint c{item.Scalar(), item.Mark().line + 1, item.Mark().column + 1};
      std::string problem;
      int position = 0;
      if (!CheckConstraint(c.expression, &problem, &position)) {
        YAML::Mark mark = item.Mark();
        const std::string shown =
            c.expression.size() > 60 ? c.expression.substr(0, 57) + "..." : c.expression;
        Error(mark, "where",
              fmt::format("in \"{}\" at character {}: {}", shown, position + 1, problem));
        continue;
      }
      spec_.where.push_back(std::move(c));
    }
  }

  // An axis may be swept in one place only: the matrix or one zip group.
  void CheckAxesAreDistinct() {
    std::map<std::string, std::string> seen;
    auto visit = [&](const Axis& axis, const std::string& where) {
      auto [it, fresh] = seen.emplace(axis.key, where);
      if (!fresh)
        errors_.push_back({file_, axis.values[0].line, axis.values[0].column, axis.key,
                           fmt::format("swept in both {} and {}; sweep each key in one place",
                                       it->second, where)});
    };
    for (const auto& axis : spec_.matrix) visit(axis, "matrix");
    for (const auto& group : spec_.zip)
      for (const auto& axis : group.axes) visit(axis, "zip");
  }

  SweepSpec& spec_;
  std::string file_;
  std::vector<SpecDiagnostic> errors_;
  YamlToJson converter_;
  bool utf8_reported_ = false;          // a value that is not UTF-8 was reported where it stands
  std::set<std::string> refused_keys_;  // keys with a value refused (and reported) somewhere
};

}  // namespace

ParseResult ParseSweep(const std::string& text, const std::filesystem::path& path) {
  ParseResult result;
  result.spec.path = path;
  result.spec.text = text;
  SpecReader reader(result.spec, path.string());
  try {
    if (text.find('\0') != std::string::npos) {
      reader.Error(YAML::Mark::null_mark(), "", "not a text file (contains NUL bytes)");
    } else {
      const YAML::Node root = YAML::Load(text);
      reader.ReportDuplicateKeys(root);
      reader.Read(root);
      reader.CheckUtf8(text);
    }
  } catch (const YAML::Exception& e) {
    reader.Error(e.mark, "", "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    reader.Error(YAML::Mark::null_mark(), "", std::string("invalid sweep: ") + e.what());
  }
  result.errors = std::move(reader.errors());
  return result;
}

}  // namespace ditbench
