// How the results database stores times (schema version 10 and later): ISO 8601 UTC text
// with milliseconds, "2026-11-22T16:41:47.154Z", in every time column (sweeps.created_at,
// campaigns.started_at and finished_at, trials.started_at and finished_at, launches.started_at
// and finished_at, superseded_trials.finished_at). Readable by eye, by sqlite3's date
// functions and by pandas; sorts as it reads. Callers of storage keep unix seconds (double);
// storage converts at its edge, so a schema-9 database (REAL unix seconds) and a migrated one
// read the same.
#pragma once

#include <string>
#include <string_view>

namespace ditbench {

// `unix_seconds` as the text stored, rounded to the millisecond.
std::string IsoUtc(double unix_seconds);

// An SQL expression reading the ISO text of `column` back as unix seconds (REAL; NULL stays
// NULL).
std::string UnixSecondsSql(std::string_view column);

// An SQL expression for the seconds from the ISO time in column `from` to the one in `to`
// (REAL, exact to the millisecond; NULL when either is NULL).
std::string SecondsBetweenSql(std::string_view from, std::string_view to);

// An SQL pattern (GLOB) every stored time matches; the schema checks it.
inline constexpr const char* kIsoUtcGlob =
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z";

}  // namespace ditbench
