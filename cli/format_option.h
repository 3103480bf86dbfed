// The one `--format` option of every command that prints an answer (advise, compare, history,
// plan, query, selfcheck): the formats a command accepts are rows of the format table
// (base/table_printers.h, kTableFormats), a value outside them is refused in one wording, and
// the command writes its answer through PrintAs, which prints any format the command does not
// write its own way with that format's Table printer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/table_printers.h"

namespace CLI {
class App;
}

namespace ditbench {

// Every row of kTableFormats: the formats of a command whose answer is a Table.
std::vector<TableFormat> EveryTableFormat();

// `--format` of one command. Made by AddFormatOption; read in the command's action.
class FormatOption {
 public:
  FormatOption(std::string command, std::vector<TableFormat> accepted)
      : command_(std::move(command)), accepted_(std::move(accepted)) {}

  // The format given (default "table"). Throws UserError "COMMAND --format 'X': expected a,
  // b or c" (the accepted formats, with "; did you mean 'y'?" for a near miss), which the
  // CLI prints as one line and exits 2 (kExitUsage).
  TableFormat Value() const;

 private:
  friend std::shared_ptr<FormatOption> AddFormatOption(CLI::App&, std::string,
                                                       std::vector<TableFormat>);
  std::string command_;
  std::vector<TableFormat> accepted_;
  std::string given_ = "table";
};

// Adds `--format` to `sub`, the subcommand `command`, accepting `accepted` (in table order).
// REQUIRES: `accepted` holds kText (the default).
std::shared_ptr<FormatOption> AddFormatOption(CLI::App& sub, std::string command,
                                              std::vector<TableFormat> accepted);

}  // namespace ditbench
