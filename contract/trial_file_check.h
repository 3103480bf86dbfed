// Checks a trial.json (the worker contract's TrialFile, contract/worker_contract.h) field by
// field before anything is built from it, with the sweep parser's own rules and messages
// (experiments/trial_settings.h): a hand-written or damaged file is refused with the field
// named, instead of reaching the model as `ulysses: 0` (a division by zero), a resolution that
// wraps around an int, or `device: "tpu"`. ReadTrialFile calls it, so the worker exits 2
// (invalid configuration) with this message.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ditbench {

// The first problem of `trial` (the whole parsed trial.json), as
// "'config.ulysses': expected an integer from 1 to 1024, got 0"; nothing when every field
// present is valid. Missing fields are left to the reader, which names them too.
std::optional<std::string> TrialFileProblem(const nlohmann::json& trial);

}  // namespace ditbench
