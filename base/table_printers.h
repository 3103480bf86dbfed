// Printers of a Table (base/table.h): one per output format, each reading only the table.
//
//   text      an aligned console table: a header line of column names, then one line per row;
//             text left, numbers right (Column::align), columns `gap` spaces apart, trailing
//             spaces trimmed; null "-". Cells are made safe for a terminal (ForTerminal) and
//             kept on one line (newline, return and tab become spaces).
//   csv       RFC 4180: a header, one record per row; a field with a comma, a quote, a
//             carriage return or a newline quoted, quotes doubled. Numbers bare
//             (Column::data_decimals); a column with notes is followed by "<name>_note".
//   json      an array of one object per row, keys in column order, indented by 2; null for no
//             value; "<name>_note" (a string, or null) after a column with notes.
//   markdown  a GitHub-flavoured pipe table: numeric columns right-aligned (`---:`); "|", "\"
//             and "*" escaped with a backslash, "&", "<" and ">" as entities, a line break as
//             "<br>", so that no cell text can end a cell or a row or become markup.
//   html      a <table> with <thead> and <tbody>, every text HTML-escaped; numeric cells
//             class "num", a note in <span class="note">. A page's extras are kept: a column's
//             description as its header's title and its html_class on its cells, a row's
//             RowHtml (id, class), a cell's CellHtml (markup in place of the value, class,
//             title); the other printers show the values alone. A header may break after
//             an underscore (<wbr>).
// Text, Markdown and HTML show a cell's note after its value: "23.90x (busy)".
#pragma once

#include <array>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/table.h"

namespace ditbench {

enum class TableFormat { kText, kCsv, kJson, kMarkdown, kHtml };

struct TextOptions {
  std::string indent;  // before every line
  bool header = true;  // false: the rows only (a list under a heading of its own)
};

struct CsvOptions {
  std::string_view line_end = "\r\n";  // RFC 4180; "\n" where a format was published so
};

void PrintText(const Table& table, std::ostream& out, const TextOptions& options = {});
// PrintText in steps, for a table too long to hold as cells (a plan of 100,000 trials): each
// cell rendered once (TextCell), the widths taken from every row (TextCharacters), then each
// line laid out (TextLine) as PrintText lays out its lines.
// `cell` in `column` as PrintText shows it: one line (it never holds '\n'), escaped for a
// terminal, cut to the column's max_chars.
std::string TextCell(const Column& column, const Cell& cell);
// The characters (code points) of a rendered cell: the width it takes.
std::size_t TextCharacters(std::string_view text);
// One line of PrintText: `cells` (TextCell's, one per column) padded to `widths` and aligned as
// `columns` say, trailing spaces cut, appended to `line` with its '\n'.
void AppendTextLine(const std::vector<Column>& columns, const std::vector<std::size_t>& widths,
                    const std::vector<std::string_view>& cells, std::string_view indent,
                    std::string& line);
void PrintCsv(const Table& table, std::ostream& out, const CsvOptions& options = {});
void PrintJson(const Table& table, std::ostream& out);
// A pipe table (GitHub's): numbers right-aligned, except in a column with no value in any row.
void PrintMarkdown(const Table& table, std::ostream& out);
// An HTML table, every value escaped and each note in a <span class="note">; numbers in cells
// of class "num". `table_class`: the table element's class, as a page styles its tables ("" for
// none): the report's tables are printed through it.
struct HtmlOptions {
  std::string table_class{};
  std::string none{};  // what a cell with no value shows ("" by default; the report's "-")
};
void PrintHtml(const Table& table, std::ostream& out, const HtmlOptions& options);
void PrintHtml(const Table& table, std::ostream& out);
// PrintHtml's text.
std::string HtmlTable(const Table& table, const HtmlOptions& options = {});

// The output formats, one row each: the name `--format` takes, its help and the printer that
// writes a Table in it (with the printer's default options). Commands accept them through
// cli/format_option.h; a command that writes some formats its own way (a versioned JSON
// document, notes around the table) prints the rest through this table (PrintAs), so a new
// row here reaches every command that accepts every format.
struct TableFormatInfo {
  TableFormat value;
  std::string_view name;
  std::string_view help;
  void (*print)(const Table& table, std::ostream& out);
};

inline constexpr auto kTableFormats = std::to_array<TableFormatInfo>({
    {TableFormat::kText, "table", "an aligned console table",
     [](const Table& t, std::ostream& out) { PrintText(t, out); }},
    {TableFormat::kCsv, "csv", "RFC 4180 CSV, a note in a <column>_note field",
     [](const Table& t, std::ostream& out) { PrintCsv(t, out); }},
    {TableFormat::kJson, "json", "JSON, a note in a <column>_note field", PrintJson},
    {TableFormat::kMarkdown, "markdown", "a GitHub pipe table", PrintMarkdown},
    {TableFormat::kHtml, "html", "an HTML table", PrintHtml},
});

// The row of `format`: its name ("table", "csv", ...) and printer.
const TableFormatInfo& FormatInfo(TableFormat format);

// The format `name` names in kTableFormats; nullopt for anything else.
std::optional<TableFormat> ParseTableFormat(std::string_view name);

// The printer of `format` (kTableFormats), with each printer's default options.
void PrintTable(const Table& table, TableFormat format, std::ostream& out);

// How a command writes one format its own way, instead of printing its table.
struct OwnFormat {
  TableFormat format;
  std::function<void(std::ostream& out)> write;
};

// Writes `format`: by its writer in `own` when there is one, else `table()` by the format's
// printer (kTableFormats). The one dispatch of every command's --format. `table` may be empty
// for a command that writes every format it accepts its own way; REQUIRES then that `own`
// has `format` (std::invalid_argument otherwise: a program error).
void PrintAs(TableFormat format, const std::vector<OwnFormat>& own,
             const std::function<Table()>& table, std::ostream& out);

// Text as the Markdown and HTML printers escape a cell, for a line around a table.
std::string MarkdownText(std::string_view text);
std::string HtmlText(std::string_view text);

// CSV written row by row (PrintCsv's output), for results too large to hold: Header once,
// then Row per row.
class CsvWriter {
 public:
  CsvWriter(std::ostream& out, std::vector<Column> columns, CsvOptions options = {});
  void Header();
  void Row(const std::vector<Cell>& cells);

 private:
  std::ostream& out_;
  std::vector<Column> columns_;
  CsvOptions options_;
};

// JSON written row by row (PrintJson's output): Row per row, then Finish once.
class JsonWriter {
 public:
  JsonWriter(std::ostream& out, std::vector<Column> columns);
  void Row(const std::vector<Cell>& cells);
  void Finish();

 private:
  std::ostream& out_;
  std::vector<Column> columns_;
  std::size_t rows_ = 0;
};

}  // namespace ditbench
