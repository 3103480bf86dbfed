// Run folders belong to their database. The default root is `<db stem>.runs/` beside the
// database (results.db -> results.runs/), so two databases in one folder never share
// `<campaign>/<key>/`. A root records its owner in `.ditbench-db` (the database's absolute
// path, one line); `run` refuses a root that another database owns, and a root holding the
// folders of campaigns its database does not know (the database was deleted, truncated or
// replaced: a new "campaign 1" would overwrite the old campaign 1's folders).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

// The run folder of one launch of a trial: <root>/<campaign>/<key>/ for the first launch (as
// before replicates existed), <key>.launch<i>/ beside it for the others.
std::filesystem::path LaunchRunDir(const std::filesystem::path& run_root, std::int64_t campaign,
                                   const std::string& key, int launch);

// `<db folder>/<db stem>.runs`, absolute.
std::filesystem::path DefaultRunRoot(const std::filesystem::path& db);

// Creates `root` if needed and claims it for `db`. Returns an empty string when the root is
// `db`'s (now or already), else one line saying which database owns it or why its owner
// file (a run-folder file: base/run_folder_file.h) cannot be read. Throws
// std::filesystem::filesystem_error when the folder or its owner file cannot be written.
[[nodiscard]] std::string ClaimRunRoot(const std::filesystem::path& root,
                                       const std::filesystem::path& db);

// The campaign folders (`<root>/<id>/`) of campaigns not in `known` (the database's), by id
// ascending. A missing root has none. Other entries of the root are ignored.
std::vector<std::int64_t> UnknownCampaignFolders(const std::filesystem::path& root,
                                                 const std::vector<CampaignInfo>& known);

// One line refusing to reuse `root` for `db`, which does not know `unknown` (from
// UnknownCampaignFolders, not empty): which campaigns, and how to start fresh.
std::string UnknownCampaignsProblem(const std::filesystem::path& root,
                                    const std::filesystem::path& db,
                                    const std::vector<std::int64_t>& unknown);

}  // namespace ditbench
