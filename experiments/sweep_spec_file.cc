#include "experiments/sweep_spec_file.h"

#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "experiments/sweep_spec.h"

namespace ditbench {
namespace {

// Reports the keys given twice in `node` and below, visiting at most `budget` more nodes.
void ReportDuplicateKeysWithin(const YAML::Node& node, std::size_t& budget,
                               const SpecErrorSink& error) {
  if (budget == 0) return;
  --budget;
  if (node.IsSequence()) {
    for (const auto& item : node) ReportDuplicateKeysWithin(item, budget, error);
  } else if (node.IsMap()) {
    std::map<std::string, int> first_line;
    for (const auto& kv : node) {
      if (kv.first.IsScalar()) {
        const std::string& key = kv.first.Scalar();
        auto [it, inserted] = first_line.emplace(key, kv.first.Mark().line + 1);
        if (!inserted)
          error(kv.first.Mark(), key, fmt::format("given twice (first at line {})", it->second));
      }
      ReportDuplicateKeysWithin(kv.second, budget, error);
    }
  }
}

}  // namespace

bool Utf8Text(const nlohmann::json& value) {
  const auto valid = [](const nlohmann::json& v) {
    return !v.is_string() || !FirstInvalidUtf8(v.get_ref<const std::string&>());
  };
  if (!valid(value)) return false;
  if (value.is_structured())
    for (const auto& item : value)
      if (!valid(item)) return false;
  return true;
}

YAML::Mark MarkOfByte(std::string_view text, std::size_t offset) {
  YAML::Mark mark;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++mark.line, mark.column = 0;
    else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80)
      ++mark.column;
  }
  return mark;
}

void ReportDuplicateKeys(const YAML::Node& root, const SpecErrorSink& error) {
  std::size_t budget = 100000;
  ReportDuplicateKeysWithin(root, budget, error);
}

std::string SpecDiagnostic::ToString() const {
  if (line == 0) return fmt::format("{}: {}", OneLine(file), OneLine(message));  // the whole file
  if (key.empty())
    return fmt::format("{}:{}:{}: {}", OneLine(file), line, column, OneLine(message));
  return fmt::format("{}:{}:{}: '{}': {}", OneLine(file), line, column, OneLine(key),
                     OneLine(message));
}

ParseResult ParseSweepFile(const std::filesystem::path& path) {
  const auto refused = [&](std::string message) {
    ParseResult result;
    result.errors.push_back({path.string(), 0, 0, "", std::move(message)});
    return result;
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return refused("is a directory, not a sweep file");
  // A user's file, read as untrusted input: a FIFO or a device (/dev/zero) is refused before
  // any read, so that `plan` and `run` never wait on a writer or read without end.
  std::string text;
  try {
    text = ReadRegularFile(path, kMaxSweepFileBytes);
  } catch (const std::runtime_error& error) {
    // The reader's line names the file first; the diagnostic names it once.
    std::string message = error.what();
    const std::string prefix = path.string() + ": ";
    if (message.starts_with(prefix)) message.erase(0, prefix.size());
    if (message.starts_with("cannot read: ")) message.erase(0, std::strlen("cannot read: "));
    return refused("cannot read the sweep file: " + message);
  }
  return ParseSweep(text, path);
}

}  // namespace ditbench
