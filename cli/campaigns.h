// `ditbench campaigns`: list the campaigns of a database, set one aside or take it back, name
// one. An excluded campaign keeps every row; it is left out of `history`, of the noise floor
// `compare` learns and of `report` (unless the report names it by --campaign).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

namespace ditbench {

struct CampaignsOptions {
  std::filesystem::path db = "results.db";
  // At most one of these; none: list.
  std::optional<std::int64_t> exclude, include;
  std::optional<std::int64_t> label_campaign;
  std::string label;  // with label_campaign; empty clears it
};

// Lists (id, started, sweep, build, label, excluded, trials) or changes one campaign and says
// what it did. Returns kExitOk, or kExitUsage after one line "ditbench campaigns: error: ..."
// on `err`: no database, an unknown campaign (the known ones listed), several actions at once,
// an older schema (run `ditbench migrate`).
int RunCampaigns(const CampaignsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ditbench
