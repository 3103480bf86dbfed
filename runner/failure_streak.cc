#include "runner/failure_streak.h"

#include <fmt/format.h>

namespace ditbench {

std::string FailureSignature(TrialStatus status, const std::string& error) {
  // The last non-empty piece between line breaks, or the " | " that joins a log tail's lines
  // in an error (runner/ingest.h).
  std::string last, piece;
  const auto take = [&] {
    const auto first = piece.find_first_not_of(" \t\r");
    if (first != std::string::npos)
      last = piece.substr(first, piece.find_last_not_of(" \t\r") - first + 1);
    piece.clear();
  };
  for (std::size_t i = 0; i < error.size(); ++i) {
    if (error[i] == '\n') {
      take();
    } else if (error.compare(i, 3, " | ") == 0) {
      take();
      i += 2;
    } else {
      piece.push_back(error[i]);
    }
  }
  take();
  return fmt::format("{}: {}", StatusName(status), last.empty() ? "(no message)" : last);
}

std::string FailureKind(TrialStatus status, const std::string& error) {
  const std::string signature = FailureSignature(status, error);
  std::string kind;
  for (char c : signature) {
    const bool digit = c >= '0' && c <= '9';
    if (!digit) kind += c;
    else if (kind.empty() || kind.back() != 'N') kind += 'N';
  }
  return kind;
}

bool FailureStreak::Add(TrialStatus status, const std::string& error) {
  if (over_) return false;
  if (status == TrialStatus::kOk) {
    over_ = true;
    return false;
  }
  const std::string kind = FailureKind(status, error);
  if (count_ > 0 && kind != kind_) {
    over_ = true;
    return false;
  }
  if (count_ == 0) {
    kind_ = kind;
    signature_ = FailureSignature(status, error);
  }
  if (++count_ < length_) return false;
  over_ = true;
  return true;
}

}  // namespace ditbench
