#include "storage/iso_time.h"

#include <cmath>
#include <cstdint>
#include <ctime>

#include <fmt/format.h>

namespace ditbench {

std::string IsoUtc(double unix_seconds) {
  const auto ms = static_cast<std::int64_t>(std::llround(unix_seconds * 1000.0));
  std::int64_t seconds = ms / 1000, milli = ms % 1000;
  if (milli < 0) {  // before 1970: floor, not truncation
    milli += 1000;
    --seconds;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", text, milli);
}

std::string UnixSecondsSql(std::string_view column) {
  // 2440587.5 is the Julian day of 1970-01-01T00:00:00Z. A Julian day in a double is good to
  // some 40 microseconds; the stored times are whole milliseconds, so rounding to the
  // millisecond gives them back exactly.
  return fmt::format("(round((julianday({}) - 2440587.5) * 86400000.0) / 1000.0)", column);
}

std::string SecondsBetweenSql(std::string_view from, std::string_view to) {
  return fmt::format("(round((julianday({}) - julianday({})) * 86400000.0) / 1000.0)", to, from);
}

}  // namespace ditbench
