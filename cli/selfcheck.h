// `ditbench selfcheck`: can this machine's numbers be trusted? Runs `ditbench-worker
// --selfcheck` once on the devices asked for (runner/selfcheck.h), judges every row
// (runner/selfcheck_rules.h; docs/selfcheck.md), prints the table and stores the verdict per
// device in the results database, where `env`, the report and `compare` read it.
//
// Exit codes: 0 when no row fails (warnings and skips included), 1 when one does (the worker
// missing, failing, timing out or writing a bad file is the "worker" row's failure), 2 for a
// usage error (a malformed --gpus or --format).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "base/table_printers.h"

#include "machine/gpu_discovery.h"

namespace ditbench {

struct SelfcheckOptions {
  std::string gpus = "auto";                // as `run --gpus`; on CPU one rank unless cpu:N
  std::filesystem::path db = "results.db";  // where the verdict is stored
  TableFormat format = TableFormat::kText;  // any of kTableFormats
  std::filesystem::path worker;             // default: DefaultWorkerProgram()
  double timeout_s = 0;                     // 0: kSelfcheckTimeoutGpuS or kSelfcheckTimeoutCpuS
};

// Runs the check, prints the table on `out` (progress and errors on `err`), stores it.
int RunSelfcheckCommand(const SelfcheckOptions& options, const GpuDiscovery& discovery,
                        std::ostream& out, std::ostream& err);

// What `env` shows of the checks stored in `db`: {"<device> on <host>": {"build",
// "started_at", "rows": ["all pass"] or one line per row that did not pass}}; a string saying
// why when there is none (no database there, none stored, a database this build cannot read).
nlohmann::json StoredSelfchecksJson(const std::filesystem::path& db);

}  // namespace ditbench
