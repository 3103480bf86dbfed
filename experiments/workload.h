// What a trial runs: the built-in DiT worker or a program of the user's own. A sweep's
// `workload` key names it; trial.json and the database carry the name (config.workload).
//
// The name is parsed once where it enters (the sweep file, trial.json, a stored configuration)
// and written back only there; everything in between asks the workload's traits, never its
// name. The traits table in workload.cc is the one list of workloads: to add one, add an enum
// value here and a row there (docs/architecture.md, "to add a workload").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ditbench {

enum class Workload {
  kDit,      // ditbench-worker runs a model of model_zoo
  kCommand,  // the sweep's own program, started once per rank
  kEngine,   // an inference server driven over HTTP (experiments/engine_spec.h)
};

// How the coordinator starts a trial's ranks (runner/scheduler_adoption.cc, TrialRequest).
enum class WorkloadLaunch {
  kWorker,   // ditbench-worker (or --worker) with `--trial RUN_DIR/trial.json`
  kProgram,  // the sweep's `command` (argument templates, experiments/command_line.h), in the
             // sweep's folder: the sweep must give a `command`, and may give custom axes
  kEngine,   // one client process whatever the degrees (`ditbench engine-trial --trial
             // RUN_DIR/trial.json`), which starts the sweep's `engine` server with them
};

// What ditbench knows about a workload. One row per workload; every field is a decision that
// some part of ditbench asks of a trial, named for what it decides.
struct WorkloadTraits {
  Workload workload;
  std::string_view name;     // as written in a sweep, trial.json and the database
  std::string_view summary;  // a few words for diagnostics: what the name means
  // Launch request: what starts the ranks (and, for kProgram, whether the sweep needs a
  // `command` and accepts custom axes).
  WorkloadLaunch launch;
  // Validity and estimate: ditbench builds the trial's model itself, so the model's shape
  // rules and this build's limits are checked before launch (experiments/validity.h), its FLOPs
  // are counted (trial_metrics) and its cost is estimated analytically (plan/sweep_plan).
  // Otherwise the model is a label: only the world size is checked, and only an earlier
  // measurement of the same trial estimates its cost.
  bool builtin_model;
  // Ingest extras: a failing trial's error carries the tail of the rank's log (an external
  // program's own last words), not only its last line.
  bool log_tail_in_errors;
};

// The processes the launcher starts for a trial of `workload` with `world_size` ranks: one for
// an engine trial (its client; the degrees go to the server), else one per rank. Each writes
// its rank file, and ingest reads this many.
int LaunchedRanks(Workload workload, int world_size);

// The row of `workload`.
const WorkloadTraits& TraitsOf(Workload workload);
// The name stored in files and the database ("dit", "command").
std::string_view WorkloadName(Workload workload);
// Inverse of WorkloadName; nullopt for a name no workload has.
std::optional<Workload> ParseWorkload(std::string_view name);
// Every name, quoted and joined for a diagnostic: "'dit' or 'command'".
std::string WorkloadNameList();
// Every name with its summary, for the sweep parser's diagnostic:
// "'dit' (the built-in DiT worker) or 'command' (your own program, see 'command')".
std::string WorkloadChoices();

}  // namespace ditbench
