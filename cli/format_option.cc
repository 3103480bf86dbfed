#include "cli/format_option.h"

#include <string_view>

#include <CLI/CLI.hpp>

#include "base/choices.h"
#include "base/did_you_mean.h"
#include "base/user_error.h"

namespace ditbench {

std::vector<TableFormat> EveryTableFormat() {
  std::vector<TableFormat> formats;
  for (const TableFormatInfo& info : kTableFormats) formats.push_back(info.value);
  return formats;
}

TableFormat FormatOption::Value() const {
  std::vector<std::string_view> names;
  for (TableFormat format : accepted_) {
    names.push_back(FormatInfo(format).name);
    if (names.back() == given_) return format;
  }
  const std::string closest = DidYouMean(given_, {names.begin(), names.end()});
  throw UserError(command_ + " --format '" + given_ + "': expected " + NameList(names) +
                      (closest.empty() ? "" : "; did you mean '" + closest + "'?"),
                  InputLocation{"", 0, "--format"});
}

std::shared_ptr<FormatOption> AddFormatOption(CLI::App& sub, std::string command,
                                              std::vector<TableFormat> accepted) {
  auto option = std::make_shared<FormatOption>(std::move(command), std::move(accepted));
  std::vector<std::string_view> names;
  for (TableFormat format : option->accepted_) names.push_back(FormatInfo(format).name);
  sub.add_option("--format", option->given_, NameList(names))->capture_default_str();
  return option;
}

}  // namespace ditbench
