// One table model for every command that prints rows (query, compare, history, plan, advise):
// typed cells under columns that carry a hint saying what their numbers are, so that every
// number of a column is printed with one format, and printers (base/table_printers.h) that
// write the same Table as an aligned console table, CSV, JSON, Markdown or HTML.
//
// A cell may carry a short trust note ("busy", "borrowed baseline"): a number derived from a
// suspect measurement says so where it is shown. The text, Markdown and HTML printers append it
// to the cell ("23.90x (busy)"); CSV and JSON give it a field of its own, "<column>_note", after
// the column, for every column declared with `notes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace ditbench {

// What a column's numbers are; each hint has one format, so a column's numbers line up.
enum class ColumnHint {
  kText,     // text, left-aligned
  kCount,    // whole numbers: "12"
  kMs,       // milliseconds, `decimals` (default 2): "40.66"
  kRatio,    // a ratio, `decimals` (default 2) and an "x": "1.85x"
  kPercent,  // a percentage, `decimals` (default 1) and a "%": "12.5%" ("+12.5%" with `sign`)
  kNumber,   // a number of no known meaning (a --sql column): `decimals`, or by magnitude
             // (4 significant digits below 1, 2 decimals below 100, else 1) when negative
};

enum class Align { kByHint, kLeft, kRight };  // kByHint: text left, numbers right

struct Column {
  std::string name;  // the header, and the key in CSV and JSON
  ColumnHint hint = ColumnHint::kText;
  int decimals = -1;  // shown decimals; negative: the hint's default
  // Decimals of the bare number in CSV; negative: the shortest text that reads back as the same
  // double. JSON always holds the number itself.
  int data_decimals = -1;
  bool sign = false;   // kPercent, kMs, kNumber: "+" before positive numbers
  bool notes = false;  // cells may carry a trust note (CSV and JSON: a "<name>_note" field)
  Align align = Align::kByHint;
  // The text printer only: the narrowest the column is printed, the spaces before it (none
  // before the first column) and the most characters of a cell (longer ones end in "...";
  // 0: no cap).
  std::size_t min_width = 0;
  std::size_t gap = 2;
  std::size_t max_chars = 0;
  // The HTML printer only: what the column means, as its header's tooltip, and a class its
  // cells carry beside "num" (a page's style sheet sizes or colours the column by it).
  std::string description{};
  std::string html_class{};
};

using CellValue = std::variant<std::monostate, std::int64_t, double, std::string>;

// What a page (the HTML report) shows of a cell beyond its value: the other printers ignore it.
struct CellHtml {
  // The cell's content in place of its escaped value and note: markup the caller built from
  // escaped text (a link, a badge, a folded detail); empty: the value, escaped, and its note.
  std::string markup{};
  std::string css_class{};  // added to the cell's class (after the column's)
  std::string title{};      // a tooltip; the printer escapes it
};

// One value, or none (monostate: printed "-" in text, empty in CSV, Markdown and HTML, null in
// JSON), with an optional trust note.
struct Cell {
  Cell() = default;
  Cell(CellValue v) : value(std::move(v)) {}            // NOLINT: a value is a cell without a note
  Cell(const char* text) : value(std::string(text)) {}  // NOLINT
  Cell(std::string text) : value(std::move(text)) {}    // NOLINT
  Cell(double number) : value(number) {}                // NOLINT
  Cell(std::int64_t number) : value(number) {}          // NOLINT
  Cell(int number) : value(std::int64_t{number}) {}     // NOLINT
  Cell(std::size_t number) : value(static_cast<std::int64_t>(number)) {}  // NOLINT
  Cell(CellValue v, std::string trust_note) : value(std::move(v)), note(std::move(trust_note)) {}

  // This cell with `html` for the HTML printer (CellHtml).
  Cell WithHtml(CellHtml html) && {
    html_ = std::make_shared<const CellHtml>(std::move(html));
    return std::move(*this);
  }
  // The cell's HTML extras, or null for none.
  const CellHtml* html() const { return html_.get(); }

  CellValue value;
  std::string note;  // short: "busy"; empty when the number is trusted

 private:
  std::shared_ptr<const CellHtml> html_;  // shared: a cell is copied with its row
};

// What a page shows of a row beyond its cells: an anchor to link to, a class to style it by.
struct RowHtml {
  std::string id{};
  std::string css_class{};
};

// Rows of cells under columns. Values: columns and rows are copied, read by printers.
class Table {
 public:
  Table() = default;
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // REQUIRES: one cell per column, and a note only in a column declared with `notes`
  // (std::invalid_argument otherwise: a program error, not a user's).
  // `html`: the row's anchor and class for the HTML printer.
  void AddRow(std::vector<Cell> cells, RowHtml html = {});

  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  bool empty() const { return rows_.empty(); }
  // Row `row`'s RowHtml (empty for a row added without one).
  const RowHtml& RowHtmlOf(std::size_t row) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
  // Each row's RowHtml, up to the last row that has one: a long table without any holds none.
  std::vector<RowHtml> row_html_;
};

// `value` as the column shows it to a person (text, Markdown, HTML): by its hint, without the
// note; "" for no value.
std::string ShownValue(const Column& column, const CellValue& value);

// `value` as CSV holds it: a bare number (no "x" or "%") with `data_decimals`; "" for none.
std::string DataValue(const Column& column, const CellValue& value);

// Whether the column's cells are right-aligned (Align, else every hint but kText).
bool AlignsRight(const Column& column);

}  // namespace ditbench
