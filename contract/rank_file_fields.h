// The fields of a rank file (contract/worker_contract.h), each read with its type and range
// checked, for ReadRankResult. A field that is missing, of the wrong type or out of range
// throws std::runtime_error "<file>: '<field>' is <value>; expected <what>", so a result that
// would store a nonsense number (an iteration of -1, a latency of 1e300 ms) is refused before
// anything derives metrics from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/measurement_records.h"

namespace ditbench {

class RankFileFields {
 public:
  explicit RankFileFields(std::filesystem::path path) : path_(std::move(path)) {}

  // Throws the one-line message for `field` (a dotted path such as "samples[3].ms").
  [[noreturn]] void Fail(const std::string& field, const nlohmann::json& value,
                         const std::string& expected) const;

  // j[key], an integer from lo to hi. REQUIRES: j is an object.
  std::int64_t Integer(const nlohmann::json& j, const std::string& key, std::int64_t lo,
                       std::int64_t hi) const;
  // j[key], a string; OptionalText gives "" when it is absent or null.
  std::string Text(const nlohmann::json& j, const std::string& key) const;
  std::string OptionalText(const nlohmann::json& j, const std::string& key) const;
  // j[key], a number from 0 to max, or nothing when it is absent or null.
  std::optional<double> OptionalNumber(const nlohmann::json& j, const std::string& key,
                                       double max) const;
  // j[key], an object.
  const nlohmann::json& Object(const nlohmann::json& j, const std::string& key) const;
  // j["clocks"]: null, or an object whose "available" and "throttled" are booleans and whose
  // "sm_mhz_min" and "sm_mhz_max" are non-negative numbers (each optional).
  nlohmann::json Clocks(const nlohmann::json& j) const;
  // j["energy"]: null or absent (nothing set), {"unavailable": a string} (*unavailable), or
  // {"joules", "window_ms"} (*energy): joules a finite number >= 0, window_ms above 0 and at
  // most kMaxEnergyWindowMs and not shorter than the timed "iteration" samples of `samples`
  // (times kEnergyWindowSlack), and joules / window at most kMaxBoardWatts.
  void Energy(const nlohmann::json& j, const std::vector<Sample>& samples,
              std::optional<RankEnergy>& energy, std::string& unavailable) const;
  // j["samples"] of rank `rank`: each an object with an integer iteration from 0 to
  // kMaxIteration, a stage, a boolean warmup and ms from 0 to below kMaxSampleMs (from
  // kMinIterationMs for the "iteration" stage); at most one "iteration" sample per iteration.
  std::vector<Sample> Samples(const nlohmann::json& j, int rank) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Samples()'s checks one sample at a time, for a reader that hands the samples over as it reads
// them (base/untrusted_input.h, JsonLimits::streamed_array_key) instead of building them all.
class SampleChecker {
 public:
  SampleChecker(const RankFileFields& fields, int rank) : fields_(fields), rank_(rank) {}
  // Checks `sample`, samples[index], and keeps it. Throws as RankFileFields does.
  void Add(const nlohmann::json& sample, std::size_t index);
  std::vector<Sample> Take() { return std::move(read_); }

 private:
  const RankFileFields& fields_;
  int rank_;
  std::vector<Sample> read_;
  std::set<int> whole_iterations_;  // iterations with an "iteration" sample so far
};

}  // namespace ditbench
