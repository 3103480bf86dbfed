// Run folders belong to their database. The default root is `<db stem>.runs/` beside the
// database (results.db -> results.runs/), so two databases in one folder never share
// `<campaign>/<key>/`. A root records its owner in `.ditbench-db` (the database's absolute
// path, one line); `run` refuses a root that another database owns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ditbench {

// The run folder of one launch of a trial: <root>/<campaign>/<key>/ for the first launch (as
// before replicates existed), <key>.launch<i>/ beside it for the others.
std::filesystem::path LaunchRunDir(const std::filesystem::path& run_root, std::int64_t campaign,
                                   const std::string& key, int launch);

// `<db folder>/<db stem>.runs`, absolute.
std::filesystem::path DefaultRunRoot(const std::filesystem::path& db);

// Creates `root` if needed and claims it for `db`. Returns an empty string when the root is
// `db`'s (now or already), else one line saying which database owns it. Throws
// std::filesystem::filesystem_error when the folder or its owner file cannot be written.
[[nodiscard]] std::string ClaimRunRoot(const std::filesystem::path& root,
                                       const std::filesystem::path& db);

}  // namespace ditbench
