// The sweep language: YAML file -> SweepSpec -> list of TrialConfig (docs/sweep-spec.md).
//
// Parsing is pure: it reads the text it is given and reports every problem it finds, each
// located at file:line:column with the offending key, what was expected and, for a misspelled
// key or model, a "did you mean". It never throws on bad input.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// One problem in a sweep file. Lines and columns are 1-based.
struct SpecDiagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;      // the key the problem is about ("matrix.resolution"), may be empty
  std::string message;  // what is wrong and what was expected

  // "file:line:column: key: message", one line.
  std::string ToString() const;
};

// One value of a matrix axis, with where it was written.
struct AxisValue {
  nlohmann::json value;
  int line = 0;
  int column = 0;
};

struct Axis {
  std::string key;  // a trial key, e.g. "resolution"
  std::vector<AxisValue> values;
};

struct SweepSpec {
  std::string name;
  std::string description;
  std::string workload = "dit";
  std::filesystem::path path;
  std::string text;          // the file's text, stored with the campaign
  TrialConfig defaults;      // built-in defaults overridden by the file's `defaults`
  std::vector<Axis> matrix;  // in file order; the last axis varies fastest
};

struct ParseResult {
  SweepSpec spec;
  std::vector<SpecDiagnostic> errors;  // empty when the spec is usable
  bool ok() const { return errors.empty(); }
};

// Parses `text` as the sweep file `path` (used only in messages and stored as-is).
ParseResult ParseSweep(const std::string& text, const std::filesystem::path& path);
// Reads and parses the file at `path`; an unreadable file is a diagnostic, not an exception.
ParseResult ParseSweepFile(const std::filesystem::path& path);

// The cartesian product of the matrix over the defaults, in file order.
// REQUIRES: spec came from a ParseResult with no errors.
std::vector<TrialConfig> ExpandTrials(const SweepSpec& spec);

// The keys a trial may set (in `defaults` and `matrix`), sorted.
const std::vector<std::string>& TrialKeys();

// Sets `key` of `config` from `value`. On a bad value returns false and puts what was
// expected into `*expected`. Unknown keys also return false.
bool ApplySetting(TrialConfig& config, const std::string& key, const nlohmann::json& value,
                  std::string* expected);

// Seconds in a duration: a number of seconds, or a number with unit s, m or h ("90s", "2h").
// Returns false for anything else.
bool ParseDuration(const nlohmann::json& value, double* seconds);

// The candidate closest to `word` by edit distance, if it is close enough to be a likely
// misspelling; otherwise empty.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ditbench
