#include "runner/run_folder.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/atomic_file.h"
#include "base/run_folder_file.h"
#include "contract/worker_contract.h"

namespace ditbench {
namespace {

constexpr const char* kOwnerFile = ".ditbench-db";
// A path, with room to spare: a longer file was not written by ClaimRunRoot.
constexpr std::uint64_t kMaxOwnerBytes = 64 * 1024;

std::filesystem::path Canonical(const std::filesystem::path& db) {
  std::error_code ec;
  auto path = std::filesystem::weakly_canonical(std::filesystem::absolute(db), ec);
  return ec ? std::filesystem::absolute(db) : path;
}

}  // namespace

std::filesystem::path DefaultRunRoot(const std::filesystem::path& db) {
  const auto absolute = std::filesystem::absolute(db);
  return absolute.parent_path() / (absolute.stem().string() + ".runs");
}

std::string ClaimRunRoot(const std::filesystem::path& root, const std::filesystem::path& db) {
  const std::string mine = Canonical(db).string();
  std::filesystem::create_directories(root);
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(root / kOwnerFile, ec))) {
    // The whole file, not its first line: a database path may hold a newline. Read as any
    // run-folder file (a link or a FIFO is refused, never followed or waited on).
    std::string owner;
    try {
      owner = ReadRunFolderFile(root, kOwnerFile, kMaxOwnerBytes);
    } catch (const std::exception& e) {
      return fmt::format("run folder '{}' cannot be claimed: {}", root.string(), e.what());
    }
    if (owner.ends_with('\n')) owner.pop_back();
    if (owner == mine) return "";
    if (!owner.empty())
      return fmt::format("run folder '{}' holds the trials of another database ('{}'); pass "
                         "another --run-dir or use that database",
                         root.string(), owner);
  }
  WriteFileAtomically(root / kOwnerFile, mine + "\n");
  return "";
}

std::vector<std::int64_t> UnknownCampaignFolders(const std::filesystem::path& root,
                                                 const std::vector<CampaignInfo>& known) {
  std::vector<std::int64_t> unknown;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || name.empty() || name.size() > 18 ||
        name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const std::int64_t id = std::stoll(name);
    if (std::none_of(known.begin(), known.end(),
                     [id](const CampaignInfo& campaign) { return campaign.id == id; }))
      unknown.push_back(id);
  }
  std::sort(unknown.begin(), unknown.end());
  return unknown;
}

std::string UnknownCampaignsProblem(const std::filesystem::path& root,
                                    const std::filesystem::path& db,
                                    const std::vector<std::int64_t>& unknown) {
  return fmt::format(
      "run folder '{}' holds the trials of campaign(s) {} that '{}' does not know (was the "
      "database deleted, emptied or replaced?); a new campaign would overwrite them. Restore "
      "the database, or start fresh by moving '{}' away or passing another --run-dir",
      root.string(), fmt::join(unknown, ", "), db.string(), root.string());
}

std::filesystem::path LaunchRunDir(const std::filesystem::path& run_root, std::int64_t campaign,
                                   const std::string& key, int launch) {
  const auto folder = run_root / std::to_string(campaign);
  return launch == 0 ? folder / key : folder / fmt::format("{}.launch{}", key, launch);
}

}  // namespace ditbench
