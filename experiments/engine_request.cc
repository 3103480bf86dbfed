#include "experiments/engine_request.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/command_line.h"

namespace ditbench {
namespace {

std::optional<std::string> TrialValue(const TrialConfig& config, const std::string& name) {
  if (name == "size") return fmt::format("{}x{}", config.resolution, config.image_height());
  return PlaceholderValue(config, name);
}

// A placeholder's value as JSON: a number when its text is one (steps, seed, guidance).
nlohmann::json TypedValue(const std::string& text) {
  if (text.empty()) return text;
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_number() && parsed.dump() == text) return parsed;
  return text;
}

bool IsSinglePlaceholder(const std::string& text, std::string* name) {
  std::vector<std::string> names;
  std::string problem;
  if (!ParseCommandTemplate(text, &names, &problem) || names.size() != 1) return false;
  if (text != "{" + names.front() + "}") return false;
  *name = names.front();
  return true;
}

std::optional<std::string> TemplateProblem(const std::string& where, const std::string& text,
                                           const std::vector<std::string>& extra) {
  std::vector<std::string> names;
  std::string problem;
  if (!ParseCommandTemplate(text, &names, &problem)) return fmt::format("'{}': {}", where, problem);
  const std::vector<std::string>& builtin = BuiltinPlaceholders();
  for (const std::string& name : names) {
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) continue;
    if (std::find(extra.begin(), extra.end(), name) != extra.end()) continue;
    return fmt::format("'{}': unknown placeholder '{{{}}}'; expected a trial field or one of {}",
                       where, name, fmt::join(extra, ", "));
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> ExpandEngineStart(const TrialConfig& config,
                                           const EngineStartValues& values) {
  const auto value_of = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "port") return values.port;
    if (name == "gpus") return values.gpus;
    if (name == "files") return values.files;
    return TrialValue(config, name);
  };
  std::vector<std::string> argv;
  for (const std::string& text : config.engine.start) {
    try {
      argv.push_back(ExpandTemplate(text, value_of));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("engine start {}", e.what()));
    }
  }
  return argv;
}

std::map<std::string, std::string> ExpandEngineFiles(const TrialConfig& config) {
  const auto value_of = [&](const std::string& name) { return TrialValue(config, name); };
  std::map<std::string, std::string> files;
  for (const auto& [name, text] : config.engine.files) {
    try {
      files[name] = ExpandTemplate(text, value_of);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("engine files.{} {}", name, e.what()));
    }
  }
  return files;
}

nlohmann::json EngineRequestBody(const TrialConfig& config) {
  nlohmann::json body = nlohmann::json::object();
  const auto value_of = [&](const std::string& name) { return TrialValue(config, name); };
  for (const auto& [field, value] : config.engine.request.items()) {
    if (!value.is_string()) {
      body[field] = value;
      continue;
    }
    const std::string& text = value.get_ref<const std::string&>();
    try {
      std::string name;
      const std::string expanded = ExpandTemplate(text, value_of);
      body[field] =
          IsSinglePlaceholder(text, &name) ? TypedValue(expanded) : nlohmann::json(expanded);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("engine request.{} {}", field, e.what()));
    }
  }
  return body;
}

std::optional<std::string> EnginePlaceholderProblem(const EngineSpec& spec) {
  for (std::size_t i = 0; i < spec.start.size(); ++i)
    if (auto problem = TemplateProblem(fmt::format("start[{}]", i), spec.start[i],
                                       {"port", "gpus", "size", "files"}))
      return problem;
  for (const auto& [name, text] : spec.files)
    if (auto problem = TemplateProblem("files." + name, text, {"size"})) return problem;
  for (const auto& [field, value] : spec.request.items())
    if (value.is_string())
      if (auto problem = TemplateProblem("request." + field, value.get<std::string>(), {"size"}))
        return problem;
  return std::nullopt;
}

}  // namespace ditbench
