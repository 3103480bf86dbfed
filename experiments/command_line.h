// The program a `command` workload starts once per rank: its argument templates and how they
// become a trial's argv.
//
// A template is plain text with placeholders in braces, "{steps}", "--height={resolution}",
// each naming a field of the trial: a built-in trial key (resolution, steps, model, precision,
// ...; `timeout` is in seconds), `world_size`, or a custom axis of the sweep. "{{" and "}}" are
// literal braces. Values are written as in trial.json: strings as they are, numbers in their
// shortest form, booleans as true/false. Pure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/trial.h"

namespace ditbench {

// The placeholder names in `text`, in order. On a malformed template (an unclosed '{', a
// stray '}', an empty "{}") returns false and says why in `*problem`.
bool ParseCommandTemplate(const std::string& text, std::vector<std::string>* names,
                          std::string* problem);

// Placeholder names every trial has a value for: the built-in trial keys and `world_size`.
const std::vector<std::string>& BuiltinPlaceholders();

// The text placeholder `name` stands for in `config`; nullopt when the trial has no such field.
std::optional<std::string> PlaceholderValue(const TrialConfig& config, const std::string& name);

// The value of a placeholder by name; nullopt when there is none.
using PlaceholderLookup = std::function<std::optional<std::string>(const std::string& name)>;

// `text` with every placeholder replaced by `value_of`'s answer. Throws std::invalid_argument
// naming the template and the placeholder when one is malformed or has no value.
std::string ExpandTemplate(const std::string& text, const PlaceholderLookup& value_of);

// config.command with every placeholder replaced. Throws std::invalid_argument naming the
// template and the placeholder when one is malformed or has no value (the sweep parser checks
// this before any trial runs, so a coordinator never sees it).
std::vector<std::string> ExpandCommand(const TrialConfig& config);

}  // namespace ditbench
