#include "base/untrusted_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ditbench {
namespace {

std::runtime_error UntrustedFileError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Thrown inside the reader when a cap is passed; turned into one runtime_error at the top.
struct CapPassed {
  std::string what;  // "nested more than 3 levels deep", naming no source
  bool is = false;   // said of a key as "'a' is nested ...", of the whole as "JSON nested ..."
};

// nlohmann's SAX interface, building the document as nlohmann's own DOM parser does (a stack of
// the containers being filled, never a recursion), with every cap checked before a value is
// built. nlohmann's callback parser is not used: on every closing bracket it scans the whole
// parent container for discarded values, so its time grows with the square of a container's
// length (an array of a million empty objects took hours).
class BoundedDomBuilder {
 public:
  using Json = nlohmann::json;

  BoundedDomBuilder(const JsonLimits& limits, std::uint64_t max_built_bytes, JsonReadStats& stats)
      : limits_(limits), max_built_bytes_(max_built_bytes), stats_(stats) {}

  Json Take() { return std::move(root_); }

  bool null() { return Put(Json(nullptr), 0); }
  bool boolean(bool value) { return Put(Json(value), 0); }
  bool number_integer(Json::number_integer_t value) { return Put(Json(value), 0); }
  bool number_unsigned(Json::number_unsigned_t value) { return Put(Json(value), 0); }
  bool number_float(Json::number_float_t value, const std::string&) { return Put(Json(value), 0); }
  bool string(std::string& value) {
    const std::uint64_t bytes = kStringBytes + value.size();
    return Put(Json(std::move(value)), bytes);
  }
  bool binary(Json::binary_t&) { return Put(Json(nullptr), 0); }  // never produced by JSON text
  bool start_object(std::size_t) { return Open(Json::object(), kObjectBytes); }
  bool start_array(std::size_t) { return Open(Json::array(), kArrayBytes); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(std::string& name) {
    if (depth_ == 1) top_key_ = name;
    if (drop_from_depth_ > 0) return true;
    if (depth_ == 1 && !limits_.keep_top_level_keys.empty() &&
        std::find(limits_.keep_top_level_keys.begin(), limits_.keep_top_level_keys.end(), name) ==
            limits_.keep_top_level_keys.end()) {
      drop_next_ = true;
      return true;
    }
    if (depth_ == 1 && limits_.on_top_level_member) {  // handed over once its value is read
      bytes_before_member_ = stats_.built_bytes;
      member_key_ = name;
      member_ = &member_value_;
      return true;
    }
    Charge(kMemberBytes + name.size());
    member_ = &(*open_.back())[name];
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw e;  // a nlohmann::json::exception, as nlohmann's own parser throws
  }

  const std::string& top_key() const { return top_key_; }

 private:
  // Bytes charged per value built: nlohmann's 16-byte value in an array slot, with half a
  // slot more for the room a growing array keeps on average; an object member's tree node with
  // its key; a string's own allocation; a container's header.
  static constexpr std::uint64_t kValueBytes = 24;
  static constexpr std::uint64_t kMemberBytes = 96;
  static constexpr std::uint64_t kStringBytes = 32;
  static constexpr std::uint64_t kObjectBytes = 64;
  static constexpr std::uint64_t kArrayBytes = 32;

  void Count() {
    if (++stats_.values > limits_.max_values)
      throw CapPassed{fmt::format("holds more than {} JSON values; expected at most {}",
                                  limits_.max_values, limits_.max_values)};
    if (limits_.cancelled && stats_.values % kJsonValuesBetweenChecks == 0 && limits_.cancelled())
      throw JsonReadCancelled("");
  }

  void Charge(std::uint64_t bytes) {
    stats_.built_bytes += bytes;
    if (stats_.built_bytes > max_built_bytes_)
      throw CapPassed{fmt::format(
          "would take more than {} bytes of memory ({} per byte of text); expected less",
          max_built_bytes_, kJsonBytesPerTextByte)};
  }

  // True when the value now arriving is dropped (inside a dropped field, or the field itself).
  bool Dropping() {
    if (drop_from_depth_ > 0) return true;
    if (!drop_next_) return false;
    drop_next_ = false;
    return true;
  }

  // Places a value built here in the container being filled; returns where it landed.
  Json* Place(Json&& value, std::uint64_t bytes) {
    Charge((open_.empty() || open_.back()->is_array() ? kValueBytes : 0) + bytes);
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    *member_ = std::move(value);
    return member_;
  }

  bool Put(Json&& value, std::uint64_t bytes) {
    Count();
    if (Dropping()) {
      ++stats_.dropped;
      return true;
    }
    Place(std::move(value), bytes);
    if (streamed_depth_ > 0 && depth_ == streamed_depth_) HandOver();
    if (HandsOverMembers() && depth_ == 1) HandOverMember();
    return true;
  }

  bool HandsOverMembers() const {
    return limits_.on_top_level_member && !open_.empty() && open_.front() == &root_ &&
           root_.is_object();
  }

  // A top-level member is complete: hand it over, and give its memory back.
  void HandOverMember() {
    Json value = std::move(member_value_);
    member_value_ = Json();
    stats_.built_bytes = bytes_before_member_;
    limits_.on_top_level_member(std::move(member_key_), std::move(value));
  }

  // An element of the streamed array is complete: hand it over, and give its memory back.
  void HandOver() {
    Json element = std::move(streamed_.back());
    streamed_ = Json::array();
    stats_.built_bytes = bytes_before_element_;
    limits_.on_streamed_element(std::move(element), streamed_count_++);
  }

  bool Open(Json&& container, std::uint64_t bytes) {
    Count();
    ++depth_;
    stats_.deepest = std::max(stats_.deepest, depth_);
    if (depth_ > limits_.max_depth)
      throw CapPassed{fmt::format("nested more than {} levels deep", limits_.max_depth), true};
    if (drop_from_depth_ == 0 && Dropping()) drop_from_depth_ = depth_;
    if (drop_from_depth_ > 0) {
      ++stats_.dropped;
      return true;
    }
    if (depth_ == 2 && container.is_array() && !limits_.streamed_array_key.empty() &&
        top_key_ == limits_.streamed_array_key && limits_.on_streamed_element &&
        streamed_depth_ == 0 && open_.size() == 1 && open_.back()->is_object()) {
      Place(std::move(container), bytes);  // the empty array the document keeps
      streamed_depth_ = depth_;
      bytes_before_element_ = stats_.built_bytes;
      open_.push_back(&streamed_);  // elements are built here, one at a time
      return true;
    }
    open_.push_back(Place(std::move(container), bytes));
    return true;
  }

  bool Close() {
    if (drop_from_depth_ > 0) {
      if (depth_ == drop_from_depth_) drop_from_depth_ = 0;
      --depth_;
      return true;
    }
    const bool stream_ends = streamed_depth_ > 0 && depth_ == streamed_depth_;
    open_.pop_back();
    --depth_;
    if (stream_ends)
      streamed_depth_ = -1;  // one streamed array per document
    else if (streamed_depth_ > 0 && depth_ == streamed_depth_)
      HandOver();
    else if (depth_ == 1 && HandsOverMembers())
      HandOverMember();
    return true;
  }

  const JsonLimits& limits_;
  const std::uint64_t max_built_bytes_;
  JsonReadStats& stats_;
  Json root_;
  std::vector<Json*> open_;  // the containers being filled, innermost last
  Json* member_ = nullptr;   // the object member the next value goes to
  int depth_ = 0;
  int drop_from_depth_ = 0;        // > 0: inside a dropped container opened at this depth
  Json member_value_;              // the top-level member being read, when members are handed over
  std::string member_key_;
  std::uint64_t bytes_before_member_ = 0;
  Json streamed_ = Json::array();  // the element of the streamed array being read
  int streamed_depth_ = 0;         // > 0: inside the streamed array, at this depth; -1: it was read
  std::uint64_t streamed_count_ = 0;
  std::uint64_t bytes_before_element_ = 0;
  bool drop_next_ = false;  // the next value is a dropped top-level field
  std::string top_key_;
};

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

RegularFile OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one for ever. It has no
  // effect on the reads of a regular file.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) throw UntrustedFileError(path, fmt::format("cannot read: {}", std::strerror(errno)));
  return CheckedRegularFile(std::move(fd), path, max_bytes);
}

RegularFile CheckedRegularFile(UniqueFd fd, const std::filesystem::path& path,
                               std::uint64_t max_bytes) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw UntrustedFileError(path, fmt::format("cannot stat: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UntrustedFileError(path,
                             fmt::format("is {}; expected a regular file", KindOf(st.st_mode)));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw UntrustedFileError(path,
                             fmt::format("is {} bytes; expected at most {}", size, max_bytes));
  return RegularFile{std::move(fd), size};
}

std::uint64_t ReadRegularFileInto(const RegularFile& file, const std::filesystem::path& path,
                                  std::uint64_t offset, void* buffer, std::uint64_t count) {
  char* bytes = static_cast<char*>(buffer);
  std::uint64_t done = 0;
  while (done < count) {
    const ssize_t n =
        ::pread(file.fd.get(), bytes + done, count - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UntrustedFileError(path, fmt::format("read failed: {}", std::strerror(errno)));
    if (n == 0) break;  // the end of the file (it may have shrunk since it was opened)
    done += static_cast<std::uint64_t>(n);
  }
  return done;
}

std::string ReadRegularFileAt(const RegularFile& file, const std::filesystem::path& path,
                              std::uint64_t offset, std::uint64_t count) {
  std::string bytes(count, '\0');
  bytes.resize(ReadRegularFileInto(file, path, offset, bytes.data(), count));
  return bytes;
}

std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const RegularFile file = OpenRegularFile(path, max_bytes);
  return ReadRegularFileAt(file, path, 0, file.size);
}

nlohmann::json ParseBoundedJson(std::string_view text, const JsonLimits& limits,
                                const std::string& where, JsonReadStats* stats) {
  JsonReadStats local;
  JsonReadStats& counted = stats ? *stats : local;
  counted = JsonReadStats{};
  const std::uint64_t max_built = kJsonBytesPerTextByte * text.size() + (1 << 20);
  BoundedDomBuilder builder(limits, max_built, counted);
  // The top-level key a cap was passed under names the field; before any key, the document.
  const auto under = [&](const CapPassed& cap) {
    if (builder.top_key().empty()) return "JSON " + cap.what;
    return fmt::format("'{}' {}{}", builder.top_key(), cap.is ? "is " : "", cap.what);
  };
  try {
    nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", where, e.what()));
  } catch (const CapPassed& cap) {
    throw std::runtime_error(fmt::format("{}: {}", where, under(cap)));
  } catch (const JsonReadCancelled&) {
    throw JsonReadCancelled(fmt::format("{}: reading was interrupted", where));
  }
  return builder.Take();
}

nlohmann::json ParseStoredJson(std::string_view text) {
  JsonLimits limits;
  limits.max_depth = kMaxStoredJsonDepth;
  try {
    return ParseBoundedJson(text, limits, "stored JSON");
  } catch (const std::runtime_error&) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where) {
  JsonLimits limits;
  limits.max_depth = max_depth;
  return ParseBoundedJson(text, limits, where);
}

}  // namespace ditbench
