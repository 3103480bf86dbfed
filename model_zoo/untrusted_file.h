// Reading a file that ditbench did not write (a diffusers folder's config.json and weights, a
// worker's rank file) without letting it hang, exhaust or crash the reader: only regular files
// are opened, without blocking (a FIFO or a device never stalls the reader), their size is
// capped before anything is read, and JSON is parsed with its nesting capped (nlohmann's copy
// and dump recurse once per level: 100,000 levels overflow the stack).
//
// Errors: std::invalid_argument, one line naming the file: "<path>: is a FIFO, expected a
// regular file", "<path>: 3 GB, more than the 16 MB expected", "<path>: nested deeper than 64
// levels".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ditbench {

// An open file descriptor, closed on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int Release() noexcept;

 private:
  int fd_ = -1;
};

// `path` opened read-only if it is a regular file of at most `max_bytes`; its size in `*size`.
// Never blocks: a FIFO, socket or device is refused before anything waits on it.
UniqueFd OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes,
                         std::uint64_t* size);

// The whole content of `path`, under the same rules.
std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

// `text` parsed as JSON, refusing input nested deeper than `max_depth` arrays and objects before
// the deep part is built. `where` names the source in errors ("<where>: not JSON: ...").
nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where);

}  // namespace ditbench
