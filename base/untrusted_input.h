// Reading input that ditbench did not write and cannot trust: a worker's or a `command`
// benchmark's rank files, logs and outputs, a diffusers folder's config.json and weights. Such a
// program may be broken or hostile, so a file is opened without blocking and must be a regular
// file (a FIFO, a device or a socket is refused before any read: a reader never waits for a
// writer), it is read only up to a size the caller gives, and JSON is parsed with its nesting
// capped before the deep part is built (nlohmann's copy and dump recurse once per level:
// 100,000 levels overflow the stack). Torch-free; the lowest layer, used by the model zoo,
// the worker contract and the coordinator alike.
//
// Errors: std::runtime_error, one line naming the file: "<path>: is a FIFO; expected a regular
// file", "<path>: is 3221225472 bytes; expected at most 16777216", "<path>: 'environment' is
// nested more than 32 levels deep", "<path>: not valid JSON: ...".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ditbench {

// An open file descriptor, closed on destruction. Move-only. The project's one owner of a raw
// descriptor (launcher pidfds and sockets, Slurm output files, atomic writes and the
// coordinator lock use it too).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept;

 private:
  int fd_ = -1;
};

// A regular file opened for reading, with its size when it was opened.
struct RegularFile {
  UniqueFd fd;
  std::uint64_t size = 0;
};

// Opens `path` read-only and non-blocking, and checks it is a regular file of at most
// `max_bytes`.
RegularFile OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

// Reads up to `count` bytes of `file` from `offset` into `buffer` and returns how many it read
// (fewer only at the end of the file). `path` names the file in errors.
std::uint64_t ReadRegularFileInto(const RegularFile& file, const std::filesystem::path& path,
                                  std::uint64_t offset, void* buffer, std::uint64_t count);

// Up to `count` bytes of `file` from `offset`, as ReadRegularFileInto.
std::string ReadRegularFileAt(const RegularFile& file, const std::filesystem::path& path,
                              std::uint64_t offset, std::uint64_t count);

// The whole of a regular file of at most `max_bytes` (OpenRegularFile, then every byte).
std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

// `text` parsed as JSON nested at most `max_depth` arrays and objects deep: the parse stops at
// the first container one level too deep, before it is built, and the error names the
// top-level key it was under. `where` (a path, "header") starts every error message.
nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where);

}  // namespace ditbench
