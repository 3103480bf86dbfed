// An engine trial's templates expanded for one trial (experiments/engine_spec.h): the server's
// argv and the request body. Pure; the sweep parser checks every placeholder with
// EnginePlaceholderProblem before any trial runs, so the expansions throw only on a
// configuration that did not come from a sweep.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// What the server's start command may name besides the trial's fields (BuiltinPlaceholders):
// {port} (the free loopback port the trial picked), {gpus} (the trial's CUDA_VISIBLE_DEVICES,
// "" on CPU) and {files} (the folder engine.files are written to, kEngineFilesFolder in the
// trial's run folder). A request or file template may name {size} ("WxH" of the resolution)
// besides the fields.
struct EngineStartValues {
  std::string port;  // "8123"; `plan` shows "{port}", which only the launch can fill
  std::string gpus;
  std::string files = "{files}";
};

inline constexpr const char* kEngineFilesFolder = "engine-files";

// config.engine.start with every placeholder replaced. Throws std::invalid_argument.
std::vector<std::string> ExpandEngineStart(const TrialConfig& config,
                                           const EngineStartValues& values);

// config.engine.files with every template expanded: file name -> its text. Throws
// std::invalid_argument.
std::map<std::string, std::string> ExpandEngineFiles(const TrialConfig& config);

// The request body the trial sends: each field of config.engine.request, a string template
// expanded (one that is a single placeholder of a number keeps the number), any other value as
// it is. Throws std::invalid_argument.
nlohmann::json EngineRequestBody(const TrialConfig& config);

// The first placeholder of `spec`'s templates that names nothing, or a malformed template, as
// "'start[2]': ..." or "'request.size': ..."; nullopt when every one has a value.
std::optional<std::string> EnginePlaceholderProblem(const EngineSpec& spec);

}  // namespace ditbench
