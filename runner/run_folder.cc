#include "runner/run_folder.h"

#include <fstream>

#include <fmt/format.h>

#include "experiments/worker_contract.h"

namespace ditbench {
namespace {

constexpr const char* kOwnerFile = ".ditbench-db";

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
  std::ifstream in(root / kOwnerFile);
  std::string owner;
  if (in && std::getline(in, owner) && !owner.empty()) {
    if (owner == mine) return "";
    return fmt::format("run folder '{}' holds the trials of another database ('{}'); pass "
                       "another --run-dir or use that database",
                       root.string(), owner);
  }
  WriteFileAtomically(root / kOwnerFile, mine + "\n");
  return "";
}

std::filesystem::path LaunchRunDir(const std::filesystem::path& run_root, std::int64_t campaign,
                                   const std::string& key, int launch) {
  const auto folder = run_root / std::to_string(campaign);
  return launch == 0 ? folder / key : folder / fmt::format("{}.launch{}", key, launch);
}

}  // namespace ditbench
