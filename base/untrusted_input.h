// Reading input that ditbench did not write and cannot trust: a worker's or a `command`
// benchmark's rank files, logs and outputs, a diffusers folder's config.json and weights. Such a
// program may be broken or hostile, so a file is opened without blocking and must be a regular
// file (a FIFO, a device or a socket is refused before any read: a reader never waits for a
// writer), it is read only up to a size the caller gives, and JSON is parsed in one linear
// pass with its nesting, its count of values and the memory it builds capped as it reads,
// before the part beyond a cap is built (nlohmann's copy and dump recurse once per level:
// 100,000 levels overflow the stack). Torch-free; the lowest layer, used by the model zoo,
// the worker contract and the coordinator alike.
//
// Errors: std::runtime_error, one line naming the file: "<path>: is a FIFO; expected a regular
// file", "<path>: is 3221225472 bytes; expected at most 16777216", "<path>: 'environment' is
// nested more than 32 levels deep", "<path>: not valid JSON: ...".
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

// `fd`, an open file, checked as OpenRegularFile checks it: a regular file of at most
// `max_bytes` (`path` names it in errors). For readers that open a file their own way.
RegularFile CheckedRegularFile(UniqueFd fd, const std::filesystem::path& path,
                               std::uint64_t max_bytes);

// Reads up to `count` bytes of `file` from `offset` into `buffer` and returns how many it read
// (fewer only at the end of the file). `path` names the file in errors.
std::uint64_t ReadRegularFileInto(const RegularFile& file, const std::filesystem::path& path,
                                  std::uint64_t offset, void* buffer, std::uint64_t count);

// Up to `count` bytes of `file` from `offset`, as ReadRegularFileInto.
std::string ReadRegularFileAt(const RegularFile& file, const std::filesystem::path& path,
                              std::uint64_t offset, std::uint64_t count);

// The whole of a regular file of at most `max_bytes` (OpenRegularFile, then every byte).
std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

// Caps on a JSON document from outside, checked while it is read: the read stops at the first
// value beyond a cap, before that value is built. Reading is linear in the text (one pass,
// O(1) work per value but an object's key, inserted in O(log members)), and no step recurses
// on the document's depth. What is built takes at most kJsonBytesPerTextByte bytes of memory
// per byte of text plus a constant, whatever the text holds (a cap checked as it is built).
struct JsonLimits {
  int max_depth = 32;                  // arrays and objects nested in one another
  std::uint64_t max_values = 1 << 20;  // values of every kind, containers and dropped ones too
  // When not empty, only these keys of the top-level object are built: any other key's value
  // is read, counted and checked for depth, and dropped (a field a reader does not know costs
  // no memory).
  std::vector<std::string> keep_top_level_keys;
  // When not empty: the top-level field of this name, when it is an array, is not built whole
  // but handed over one element at a time as each is read (its index from 0), and the
  // document keeps an empty array in its place; the memory an element took is given back once
  // it is handed over. The callback may throw to refuse the document.
  std::string streamed_array_key;
  std::function<void(nlohmann::json&& element, std::uint64_t index)> on_streamed_element;
  // When set and the document is an object: its members are handed over one at a time as each
  // is read (after keep_top_level_keys has dropped any), and the document is left an empty
  // object; the memory a member took is given back once it is handed over. Not together with
  // streamed_array_key. The callback may throw to refuse the document.
  std::function<void(std::string&& key, nlohmann::json&& value)> on_top_level_member;
  // Asked once every kJsonValuesBetweenChecks values: true ends the read with JsonReadCancelled
  // (an interrupt while a large file is read takes effect within milliseconds).
  std::function<bool()> cancelled;
};
inline constexpr std::uint64_t kJsonValuesBetweenChecks = 1 << 16;
inline constexpr std::uint64_t kJsonBytesPerTextByte = 16;

// What a read did: for tests and the ingest benchmark, which pin that the work is linear.
struct JsonReadStats {
  std::uint64_t values = 0;       // values read, dropped ones included
  std::uint64_t dropped = 0;      // values read and not built (keep_top_level_keys)
  std::uint64_t built_bytes = 0;  // the estimate of memory built that the cap is checked on
  int deepest = 0;
};

// Thrown when JsonLimits::cancelled said so. A std::runtime_error naming the source.
class JsonReadCancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `text` parsed as JSON within `limits`. `where` (a path, "header") starts every error
// message; a cap's error names the top-level key it was under: "rank0.json: 'samples' holds
// more than 1048576 JSON values; expected at most 1048576", "f: 'a' is nested more than 3
// levels deep", "f: not valid JSON: ...". Throws std::runtime_error.
nlohmann::json ParseBoundedJson(std::string_view text, const JsonLimits& limits,
                                const std::string& where, JsonReadStats* stats = nullptr);

// JSON read back from the database, which another program may have written: ParseBoundedJson
// with kMaxStoredJsonDepth and the default caps, or a discarded value
// (nlohmann::json::value_t::discarded, as nlohmann::json::parse(text, nullptr, false) gives)
// when it is not valid JSON or passes a cap. Never throws for what the text holds.
inline constexpr int kMaxStoredJsonDepth = 32;
nlohmann::json ParseStoredJson(std::string_view text);

// The same with only a depth cap and the default count cap.
nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where);

}  // namespace ditbench
