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
//             class "num", a note in <span class="note">.
// Text, Markdown and HTML show a cell's note after its value: "23.90x (busy)".
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/table.h"

namespace ditbench {

enum class TableFormat { kText, kCsv, kJson, kMarkdown, kHtml };

// "table" (kText), "csv", "json", "markdown" or "html"; nullopt for anything else.
std::optional<TableFormat> ParseTableFormat(std::string_view name);

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
void PrintHtml(const Table& table, std::ostream& out);

// The printer of `format`, with each printer's default options.
void PrintTable(const Table& table, TableFormat format, std::ostream& out);

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
