// The kinds of trial: what a trial measures, and so which rules, runner and summarizer it takes.
// A `timed` trial times iterations of its scope back to back; a `served` trial (`serve:` in a
// sweep) serves a load of requests on its dp groups as replicas. KindOf is the one place that
// tells them apart from a configuration; everything else asks the kind's row, never `serve`.
//
// The rows here are the kind's rules, in the experiments layer. Its functions in higher layers
// are tables of their own keyed by TrialKind, one row per kind (metrics/trial_kind_metrics.h:
// the ranks' records checked and summarized; worker/worker.cc: the runner). To add a kind (the
// engine workload's trials), add an enumerator here and a row to each table; a table that
// misses a row fails TrialKindTest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/serve_load.h"
#include "experiments/trial.h"
#include "experiments/validity.h"

namespace ditbench {

enum class TrialKind {
  kTimed,   // iterations back to back, timed (repeats)
  kServed,  // a load of requests served (`serve`, experiments/serve_load.h)
};
// How many kinds there are: a table of rows by kind in a higher layer holds this many, in
// TrialKind's order (checked where it is defined, or by TrialKindTest).
inline constexpr std::size_t kTrialKinds = 2;

struct TrialKindRow {
  TrialKind kind;
  std::string_view name;  // as diagnostics and tables name it
  // Whether its requests are materialized once into the trial's file (TrialFile::requests,
  // experiments/trial_requests.h): the list its worker serves and ingest checks against.
  bool has_requests;
  // Why a program workload (WorkloadLaunch::kProgram) cannot run a trial of this kind, a format
  // string taking the workload's name; empty: a program can (it times its own iterations).
  std::string_view program_refusal;
  // The kind's rule among the trial's own (experiments/validity.h, BrokenRule): why the
  // configuration is broken for this kind, or nothing.
  std::optional<std::string> (*broken_rule)(const TrialConfig& config);
  // The kind's rules once the trial itself is valid and supported: fills `verdict` (served:
  // every shape its requests ask for, judged as the trial that times it alone, and its rank
  // file's size). `requests`: the trial file's materialized list (the worker), or null to
  // compute it from the configuration (the plan and the coordinator, before any trial file).
  void (*judge)(const TrialConfig& config, const Capacity& capacity, const RequestList* requests,
                TrialVerdict& verdict);
};

// Every kind, in enumerator order.
const std::vector<TrialKindRow>& TrialKinds();
const TrialKindRow& KindRow(TrialKind kind);
// The kind of `config`: served when it has a `serve` load, timed otherwise.
TrialKind KindOf(const TrialConfig& config);
std::string_view TrialKindName(TrialKind kind);

}  // namespace ditbench
