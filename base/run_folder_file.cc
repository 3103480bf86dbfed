#include "base/run_folder_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::runtime_error FileError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

// Why openat(dir, component, O_NOFOLLOW ...) failed, in the user's words: a link is named as
// one, whatever errno the kernel chose for it (ELOOP for a file, ENOTDIR for a folder).
std::string OpenFailure(int dir, const std::string& component, int error) {
  struct stat st {};
  if (::fstatat(dir, component.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return "is a symbolic link; expected a regular file in the run folder";
  return fmt::format("cannot read: {}", std::strerror(error));
}

}  // namespace

RegularFile OpenRunFolderFile(const std::filesystem::path& folder,
                              const std::filesystem::path& name, std::uint64_t max_bytes) {
  const std::filesystem::path path = folder / name;
  if (name.empty() || name.is_absolute())
    throw FileError(path, "expected a file name inside the run folder");
  std::vector<std::string> components;
  for (const auto& part : name) {
    const std::string component = part.string();
    if (component.empty()) continue;  // a trailing '/'
    if (component == "." || component == "..")
      throw FileError(path, "expected a file name inside the run folder (no '.' or '..')");
    components.push_back(component);
  }
  if (components.empty()) throw FileError(path, "expected a file name inside the run folder");

  UniqueFd dir(::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) throw FileError(path, fmt::format("cannot read: {}", std::strerror(errno)));
  for (std::size_t i = 0; i + 1 < components.size(); ++i) {
    UniqueFd next(::openat(dir.get(), components[i].c_str(),
                           O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) throw FileError(path, OpenFailure(dir.get(), components[i], errno));
    struct stat st {};
    if (::fstat(next.get(), &st) != 0 || !S_ISDIR(st.st_mode))  // O_PATH may open a link itself
      throw FileError(path, OpenFailure(dir.get(), components[i], ENOTDIR));
    dir = std::move(next);
  }
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one for ever.
  UniqueFd fd(::openat(dir.get(), components.back().c_str(),
                       O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!fd) throw FileError(path, OpenFailure(dir.get(), components.back(), errno));
  return CheckedRegularFile(std::move(fd), path, max_bytes);
}

RegularFile OpenRunFolderFile(const std::filesystem::path& file, std::uint64_t max_bytes) {
  return OpenRunFolderFile(file.parent_path().empty() ? "." : file.parent_path(),
                           file.filename(), max_bytes);
}

std::string ReadRunFolderFile(const std::filesystem::path& folder,
                              const std::filesystem::path& name, std::uint64_t max_bytes) {
  const RegularFile file = OpenRunFolderFile(folder, name, max_bytes);
  return ReadRegularFileAt(file, folder / name, 0, file.size);
}

std::string ReadRunFolderFile(const std::filesystem::path& file, std::uint64_t max_bytes) {
  const RegularFile opened = OpenRunFolderFile(file, max_bytes);
  return ReadRegularFileAt(opened, file, 0, opened.size);
}

std::string ReadRunFolderNote(const std::filesystem::path& folder,
                              const std::filesystem::path& name) noexcept {
  try {
    // Any size: only the start is read, so a huge note costs no more than a short one.
    const RegularFile file = OpenRunFolderFile(folder, name, std::numeric_limits<std::uint64_t>::max());
    std::string text = ReadRegularFileAt(file, folder / name, 0, kMaxRunFolderNoteBytes);
    text.resize(std::min(text.find('\n'), text.size()));
    if (text.ends_with('\r')) text.pop_back();
    return text;
  } catch (...) {
    return "";
  }
}

}  // namespace ditbench
