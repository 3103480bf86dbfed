#include "experiments/command_line.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "experiments/trial_settings.h"

namespace ditbench {
namespace {

// Walks `text`, calling `literal(piece)` for text and `placeholder(name)` for each {name}.
template <typename Literal, typename Placeholder>
bool Walk(const std::string& text, std::string* problem, const Literal& literal,
          const Placeholder& placeholder) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal(std::string(1, c));
      ++i;
    } else if (c == '{') {
      const std::size_t close = text.find('}', i + 1);
      if (close == std::string::npos) {
        *problem = fmt::format(
            "'{{' at character {} is never closed (write '{{{{' for a literal "
            "brace)",
            i + 1);
        return false;
      }
      const std::string name = text.substr(i + 1, close - i - 1);
      if (name.empty() || name.find('{') != std::string::npos) {
        *problem = fmt::format("expected a field name inside the braces at character {}", i + 1);
        return false;
      }
      placeholder(name);
      i = close;
    } else if (c == '}') {
      *problem = fmt::format(
          "'}}' at character {} closes nothing (write '}}}}' for a literal "
          "brace)",
          i + 1);
      return false;
    } else {
      literal(std::string(1, c));
    }
  }
  return true;
}

std::string Text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

bool ParseCommandTemplate(const std::string& text, std::vector<std::string>* names,
                          std::string* problem) {
  return Walk(
      text, problem, [](const std::string&) {},
      [&](const std::string& name) { names->push_back(name); });
}

const std::vector<std::string>& BuiltinPlaceholders() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = TrialKeys();
    n.push_back("world_size");
    return n;
  }();
  return names;
}

std::optional<std::string> PlaceholderValue(const TrialConfig& config, const std::string& name) {
  if (name == "world_size") return std::to_string(config.world_size());
  if (name == "model") return config.model;
  if (auto it = config.custom.find(name); it != config.custom.end()) return Text(it->second);
  // Otherwise only a built-in trial key names a field (the parser accepts no other name): the
  // program itself, the custom axes as a whole and the workload are not argument values.
  const std::vector<std::string>& keys = TrialKeys();
  if (!std::binary_search(keys.begin(), keys.end(), name)) return std::nullopt;
  const nlohmann::json canonical = CanonicalJson(config);
  const std::string key = CanonicalKeyOf(name);
  if (!canonical.contains(key)) return std::nullopt;
  return Text(canonical[key]);
}

std::string ExpandTemplate(const std::string& text, const PlaceholderLookup& value_of) {
  std::string out, problem, missing;
  const bool ok = Walk(
      text, &problem, [&](const std::string& piece) { out += piece; },
      [&](const std::string& name) {
        auto value = value_of(name);
        if (!value && missing.empty()) missing = name;
        out += value.value_or("");
      });
  if (!ok) throw std::invalid_argument(fmt::format("argument \"{}\": {}", text, problem));
  if (!missing.empty())
    throw std::invalid_argument(
        fmt::format("argument \"{}\": the trial has no field '{}'", text, missing));
  return out;
}

std::vector<std::string> ExpandCommand(const TrialConfig& config) {
  std::vector<std::string> argv;
  const auto value_of = [&](const std::string& name) { return PlaceholderValue(config, name); };
  for (const std::string& text : config.command) {
    try {
      argv.push_back(ExpandTemplate(text, value_of));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("command {}", e.what()));
    }
  }
  return argv;
}

}  // namespace ditbench
