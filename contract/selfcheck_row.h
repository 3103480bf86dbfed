// One row of `ditbench selfcheck`'s verdict (runner/selfcheck_rules.h judges them): what
// storage keeps per device (schema version 19, selfchecks.rows_json) and what `env`, the
// report and `compare` read back. Its JSON is versioned by the selfchecks table's schema.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

// kInfo: a figure measured and shown, with nothing it is judged against (memory bandwidth,
// attention per backend, communication, a matmul with no known peak): never "pass", which
// would claim a check that nothing could have failed.
enum class SelfcheckVerdict { kPass, kWarn, kFail, kSkip, kInfo };

const char* VerdictName(SelfcheckVerdict verdict);  // "pass", "warn", "fail", "skip", "info"
// The verdict named `name`; nullopt for anything else (a stored row from another build).
std::optional<SelfcheckVerdict> ParseVerdict(const std::string& name);

struct SelfcheckRow {
  std::string name;  // "timing fidelity", "attention (flash)"
  SelfcheckVerdict verdict = SelfcheckVerdict::kSkip;
  std::string figure;  // the measured figure as text: "0.4% off", "612 TFLOP/s"
  std::string reason;  // why this verdict (always set for warn, fail and skip)
};

// True when any row fails (`ditbench selfcheck` then exits 1).
bool AnyFailed(const std::vector<SelfcheckRow>& rows);

// One line per row that was judged and did not pass, skipped ones included ("clocks: warn: SM
// 1410 of 1980 MHz: hw thermal"), or the one line "all pass" when every judged row passed
// (info rows are not judged, so not listed).
std::vector<std::string> NotPassingLines(const std::vector<SelfcheckRow>& rows);

// Rows as stored and read back: [{"name", "verdict", "figure", "reason"}, ...]. Reading skips
// entries of another shape or an unknown verdict (untrusted: a database edited by hand).
nlohmann::json RowsJson(const std::vector<SelfcheckRow>& rows);
std::vector<SelfcheckRow> RowsFromJson(const nlohmann::json& json);

}  // namespace ditbench
