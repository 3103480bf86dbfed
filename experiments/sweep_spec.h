// The sweep language: YAML file -> SweepSpec (docs/sweep-spec.md). Expansion into trials is in
// experiments/sweep_expand.h.
//
// Parsing reads the text it is given, and a serving trace's bytes (a `serve.trace` is hashed
// into the trial key: experiments/serve_load.h, trace_sha256), and reports every problem it
// finds, each located at file:line:column with the offending key, what was expected and, for a
// misspelled key or model, a "did you mean". It never throws on bad input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// One problem in a sweep file. Lines and columns are 1-based (0 when the file is unreadable).
struct SpecDiagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;      // the key the problem is about ("matrix.resolution"), may be empty
  std::string message;  // what is wrong and what was expected

  // "file:line:column: 'key': message", one line ("file: message" for the whole file).
  std::string ToString() const;
};

// One value written in the file, with where it was written.
struct Setting {
  std::string key;  // a trial key, e.g. "resolution"
  nlohmann::json value;
  int line = 0;
  int column = 0;
};

struct Axis {
  std::string key;
  std::vector<Setting> values;  // every value has key == this key
};

// Axes advanced together: point i takes value i of every axis. All axes have equal lengths.
struct ZipGroup {
  std::vector<Axis> axes;
  std::size_t size() const { return axes.empty() ? 0 : axes[0].values.size(); }
};

// A `where` expression over the trial's numeric axes (see sweep_expand.h for the variables).
struct Constraint {
  std::string expression;
  int line = 0;
  int column = 0;
};

struct SweepSpec {
  std::string name;
  std::string description;
  Workload workload = Workload::kDit;  // also in defaults.workload
  // A workload launched as a program (the `command` workload): the argument templates (also in
  // defaults.command), each with where it was written (line, column), for diagnostics.
  std::vector<Setting> command;
  // Separate process launches of every trial, interleaved across the campaign (all trials
  // once, then each a second time, ...) so that drift hits every configuration alike. A
  // measurement-policy field: not part of any trial key.
  int replicates = 1;
  // `on_oom: skip_larger`: trials at least as large as one that ran out of memory are skipped
  // (plan/oom_prediction.h). Default `run`: every trial runs.
  bool skip_larger_after_oom = false;
  // `search: {strategy: halving, keep: 0.25}` (plan/halving.h): 0 when there is no search.
  double halving_keep = 0;
  std::filesystem::path path;
  std::string text;                           // the file's text, stored with the campaign
  TrialConfig defaults;                       // built-in defaults overridden by `defaults`
  std::vector<Axis> matrix;                   // in file order; the last axis varies fastest
  std::vector<ZipGroup> zip;                  // crossed with the matrix, after its axes
  std::vector<std::vector<Setting>> include;  // extra points, merged onto the defaults
  std::vector<std::vector<Setting>> exclude;  // partial points: matching trials are removed
  std::vector<Constraint> where;              // every constraint must hold
};

struct ParseResult {
  SweepSpec spec;
  std::vector<SpecDiagnostic> errors;  // empty when the spec is usable
  bool ok() const { return errors.empty(); }
};

// Parses `text` as the sweep file `path` (used only in messages and stored as-is).
ParseResult ParseSweep(const std::string& text, const std::filesystem::path& path);
// The most bytes of a sweep file (no real sweep comes near it; a larger file, or one that is
// not a regular file, is refused before it is read).
inline constexpr std::uint64_t kMaxSweepFileBytes = 4ull << 20;
// Reads and parses the file at `path`; an unreadable file is a diagnostic, not an exception: a
// directory, a FIFO or a device (never opened for a blocking read), a file over
// kMaxSweepFileBytes.
ParseResult ParseSweepFile(const std::filesystem::path& path);

// The most launches per trial `replicates` may ask for.
inline constexpr int kMaxReplicates = 1000;

// The most trials one sweep may expand to; a larger product is a spec error.
inline constexpr std::size_t kMaxTrials = 1'000'000;

}  // namespace ditbench
