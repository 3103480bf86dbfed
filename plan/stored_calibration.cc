#include "plan/stored_calibration.h"

#include <exception>
#include <system_error>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "storage/results_db.h"
#include "storage/selfcheck_store.h"

namespace ditbench {
namespace {

const SelfcheckRow* Row(const SelfcheckRecord& record, const std::string& name) {
  for (const SelfcheckRow& row : record.rows)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace

StoredCalibration LoadCalibration(const std::filesystem::path& db, const std::string& device,
                                  const std::string& host) {
  StoredCalibration out;
  const std::string ask = fmt::format("`ditbench selfcheck --db {}` measures one", db.string());
  std::error_code ec;
  if (db.empty()) {
    out.why_not = "no database given (`ditbench selfcheck --db FILE` measures this machine)";
    return out;
  }
  if (!std::filesystem::is_regular_file(db, ec)) {
    out.why_not = fmt::format("no database at '{}' ({})", db.string(), ask);
    return out;
  }
  try {
    auto results = ResultsDb::Open(db, /*read_only=*/true);
    std::optional<SelfcheckRecord> chosen;
    for (SelfcheckRecord& record : results->selfchecks().LatestPerDevice()) {
      if (record.device != device) continue;
      const bool here = record.host == host;
      if (device == "cpu" && !here) continue;
      if (!chosen || (here && chosen->host != host) ||
          (here == (chosen->host == host) && record.started_at > chosen->started_at))
        chosen = std::move(record);
    }
    if (!chosen) {
      out.why_not = fmt::format("no selfcheck of '{}'{} in '{}' ({})", device,
                                device == "cpu" ? " on this host" : "", db.string(), ask);
      return out;
    }
    // Host, build, time and reasons come from the database: untrusted text on a terminal.
    const std::string when = ForTerminal(chosen->started_at.substr(0, 16), 40);
    for (const char* name : {"worker", "host load"}) {
      const SelfcheckRow* row = Row(*chosen, name);
      if (!row || row->verdict != SelfcheckVerdict::kPass) {
        out.why_not = fmt::format(
            "the newest selfcheck of '{}' ({}) did not pass its {} row{}: not used ({})", device,
            when, name,
            row && !row->reason.empty() ? " (" + ForTerminal(row->reason, 200) + ")" : "", ask);
        return out;
      }
    }
    if (chosen->measurements.is_null()) {
      out.why_not = fmt::format("the newest selfcheck of '{}' ({}) {} ({})", device, when,
                                chosen->measurements_unreadable
                                    ? "stored measurements that do not parse as JSON"
                                    : "stored no measurements",
                                ask);
      return out;
    }
    const SelfcheckMeasurements m =
        SelfcheckFromJson(chosen->measurements, fmt::format("selfcheck #{}", chosen->id));
    std::string why;
    out.calibration = CalibrationFrom(
        m,
        fmt::format("selfcheck #{} of {} on {}, build {}, {}", chosen->id, device,
                    ForTerminal(chosen->host, 100), ForTerminal(chosen->build, 100), when),
        &why);
    if (!out.calibration)
      out.why_not =
          fmt::format("the newest selfcheck of '{}' ({}): {} ({})", device, when, why, ask);
  } catch (const std::exception& e) {
    out.calibration.reset();
    out.why_not =
        fmt::format("the stored selfcheck could not be read: {}", ForTerminal(e.what(), 300));
  }
  return out;
}

}  // namespace ditbench
