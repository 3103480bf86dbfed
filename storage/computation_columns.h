// The knobs of a trial's computation as columns of `ditbench query` (SqlConsole::QueryResults),
// read from what every trial stores, its computation JSON (trials.config_json,
// experiments/trial_identity.h: ComputationJson), rather than from a list of knobs: a knob added
// to the computation is a column the day a trial sets it, typed by the values it holds.
//
// Every field of the computation is a column by its name ("vae_parallel", "cache", "serve"),
// and so is every value inside an object field, by its path ("cache.kind", "serve.rate",
// "schedule.high_precision_first"); array elements and the custom axes (`custom`, columns by
// their own names, from the view's `axes`) are not. A field a trial leaves out reads as its
// identity default (`vae_parallel` 1, `cache` "none", `serve` "none"); a path inside a field
// the trial leaves out reads NULL. Internal to storage (a raw connection in).
#pragma once

#include <string>
#include <vector>

struct sqlite3;

namespace ditbench {

// The kinds of value a column holds: numbers (JSON numbers and booleans), text (strings, and an
// object or array field, compared as its compact JSON), or both (a resolution of 512 and another
// of "768x512").
struct HeldValues {
  bool numbers = false;
  bool text = false;
};

struct ComputationColumn {
  std::string name;   // "vae_parallel", "cache.kind"
  std::string value;  // an SQL expression over the trial's row `t` of table trials
  HeldValues holds;   // in every trial of the database, and its default
};

// Every computation column of the database's trials, sorted by name: each field of a stored
// computation and each setting's field with an identity default (so that `vae_parallel=1`
// reads in a database where no trial split its decode), each scalar path inside an object
// field. Names are letters, digits, '_' and '.' only, safe to quote in SQL.
std::vector<ComputationColumn> ComputationColumns(sqlite3* db);

}  // namespace ditbench
