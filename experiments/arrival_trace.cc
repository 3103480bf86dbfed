// The arrival trace reader (experiments/serve_load.h, ReadArrivalTrace): a CSV file from
// outside, untrusted, read whole (at most kMaxArrivalTraceBytes) and checked line by line.
#include <fcntl.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "base/user_error.h"
#include "experiments/arrivals.h"
#include "experiments/resolution.h"
#include "experiments/serve_load.h"
#include "experiments/trial.h"

namespace ditbench {
namespace {

constexpr std::string_view kTraceHeader = "arrival_s,width,height,frames,steps";

// A trace file's bytes: a regular file of at most kMaxArrivalTraceBytes, opened without
// following a symbolic link (a link may point at any file the user can read, and a trace's
// errors name what they read).
std::string ReadTraceBytes(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    const int error = errno;
    throw UserError(
        error == ELOOP
            ? fmt::format("{}: is a symbolic link; expected the trace file itself (a link is "
                          "not followed)",
                          OneLine(path.string()))
            : fmt::format("{}: cannot read: {}", OneLine(path.string()), std::strerror(error)),
        {path.string(), 0, ""});
  }
  try {
    const RegularFile file = CheckedRegularFile(std::move(fd), path, kMaxArrivalTraceBytes);
    return ReadRegularFileAt(file, path, 0, file.size);
  } catch (const std::runtime_error& error) {
    throw UserError(error.what(), {path.string(), 0, ""});
  }
}

constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// What is wrong with a trace's first line, or nullopt. Never quotes the line: a file that is
// not a trace may be anything, and the message goes to the console, the database and reports.
std::optional<std::string> HeaderProblem(std::string_view line) {
  if (line == kTraceHeader) return std::nullopt;
  return fmt::format(
      "the first line is not the header (it is {} bytes{}); expected exactly "
      "'{}'",
      line.size(), line.find(',') == std::string_view::npos ? ", with no comma" : "", kTraceHeader);
}

}  // namespace

std::string ArrivalTraceSha256(const std::filesystem::path& path) {
  return Sha256Hex(ReadTraceBytes(path));
}

std::optional<std::string> LocateArrivalTrace(const std::filesystem::path& written,
                                              const std::filesystem::path& sweep_folder,
                                              std::filesystem::path* path, std::string* sha256) {
  *path = written;
  if (!written.is_absolute()) {
    *path = (sweep_folder / written).lexically_normal();
    std::error_code error;
    const auto folder = std::filesystem::weakly_canonical(sweep_folder, error);
    const auto resolved = std::filesystem::weakly_canonical(*path, error);
    const std::filesystem::path inside = resolved.lexically_relative(folder);
    if (error || inside.empty() || *inside.begin() == "..")
      return fmt::format(
          "'{}' resolves outside the sweep file's folder; expected a trace "
          "inside it, or an absolute path",
          OneLine(path->string()));
  }
  try {
    *sha256 = ArrivalTraceSha256(*path);
  } catch (const std::exception& error) {
    return fmt::format("{}; expected an arrival trace (CSV) file", error.what());
  }
  return std::nullopt;
}

ArrivalTrace ReadArrivalTrace(const std::filesystem::path& path) {
  const std::string where = OneLine(path.string());
  std::string text = ReadTraceBytes(path);
  ArrivalTrace trace;
  trace.sha256 = Sha256Hex(text);
  // A UTF-8 byte-order mark, as some editors and spreadsheets write, is not part of the header.
  if (text.starts_with(kUtf8ByteOrderMark)) text.erase(0, kUtf8ByteOrderMark.size());
  if (text.empty()) {
    throw UserError(fmt::format("{}: is empty; expected the header line '{}'", where, kTraceHeader),
                    {path.string(), 0, ""});
  }
  int line_number = 0;
  const auto fail = [&](const std::string& column, const std::string& message) {
    throw UserError(fmt::format("{}:{}: {}", where, line_number, message),
                    {path.string(), line_number, column});
  };
  // `field` of `column` as a number from `low` to `high` (an integer when T is int).
  const auto parse = [&]<typename T>(std::string_view field, const char* column, T low, T high,
                                     const std::string& expected) {
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
      field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
    T value{};
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size() || !(value >= low) ||
        !(value <= high))
      fail(column, fmt::format("column '{}' is '{}'; expected {}", column, ForTerminal(field, 60),
                               expected));
    return value;
  };

  std::string_view rest = text;
  double previous_s = 0;
  std::map<std::array<int, 4>, std::size_t> shape_index;  // width, height, frames, steps
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    ++line_number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line_number == 1) {
      if (auto problem = HeaderProblem(line)) fail("", *problem);
      continue;
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (trace.requests.size() == static_cast<std::size_t>(kMaxServeRequests))
      fail("", fmt::format("more than {} requests; expected at most {}", kMaxServeRequests,
                           kMaxServeRequests));
    std::vector<std::string_view> fields;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(line.substr(start, comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (fields.size() != 5)
      fail("", fmt::format("has {} columns; expected 5: {}", fields.size(), kTraceHeader));
    const double arrival_s = parse(fields[0], "arrival_s", 0.0, kMaxServeSeconds,
                                   fmt::format("seconds from 0 to {}", kMaxServeSeconds));
    if (arrival_s < previous_s)
      fail("arrival_s", fmt::format("column 'arrival_s' is '{}'; expected a time not before "
                                    "the previous request's {}",
                                    ForTerminal(fields[0], 60), previous_s));
    previous_s = arrival_s;
    const std::string side =
        fmt::format("an integer from {} to {}", kMinResolutionSide, kMaxResolutionSide);
    RequestShape shape{parse(fields[1], "width", kMinResolutionSide, kMaxResolutionSide, side),
                       parse(fields[2], "height", kMinResolutionSide, kMaxResolutionSide, side),
                       parse(fields[3], "frames", 0, kMaxRequestFrames,
                             fmt::format("an integer from 0 (an image) to {}", kMaxRequestFrames)),
                       parse(fields[4], "steps", 1, kMaxRequestSteps,
                             fmt::format("an integer from 1 to {}", kMaxRequestSteps)),
                       1};
    const auto [known, added] = shape_index.try_emplace(
        {shape.width, shape.height, shape.frames, shape.steps}, trace.shapes.size());
    if (added) {
      if (trace.shapes.size() == static_cast<std::size_t>(kMaxRequestShapes))
        fail("", fmt::format("asks for a {}th shape ({}); expected at most {} shapes in one "
                             "trace",
                             kMaxRequestShapes + 1, RequestShapeText(shape), kMaxRequestShapes));
      trace.shapes.push_back(shape);
    } else {
      trace.shapes[known->second].weight += 1;
    }
    trace.requests.push_back(
        {static_cast<int>(trace.requests.size()), arrival_s, static_cast<int>(known->second)});
  }
  if (trace.requests.empty()) {
    throw UserError(where + ": has no requests; expected at least one line after the header",
                    {path.string(), 0, ""});
  }
  return trace;
}

}  // namespace ditbench
