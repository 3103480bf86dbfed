#include "base/table.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace ditbench {
namespace {

int DefaultDecimals(ColumnHint hint) {
  switch (hint) {
    case ColumnHint::kMs:
    case ColumnHint::kRatio:
      return 2;
    case ColumnHint::kPercent:
      return 1;
    case ColumnHint::kCount:
      return 0;
    case ColumnHint::kText:
    case ColumnHint::kNumber:
      return -1;
  }
  return -1;
}

// A number with `decimals` (negative: by magnitude, as kNumber says), signed if asked.
std::string Number(double v, int decimals, bool sign) {
  if (decimals < 0) {
    const double a = std::abs(v);
    const std::string digits = a >= 100 ? fmt::format("{:.1f}", v)
                               : a >= 1 ? fmt::format("{:.2f}", v)
                                        : fmt::format("{:.4g}", v);
    return sign && v > 0 ? "+" + digits : digits;
  }
  return sign ? fmt::format("{:+.{}f}", v, decimals) : fmt::format("{:.{}f}", v, decimals);
}

}  // namespace

void Table::AddRow(std::vector<Cell> cells, RowHtml html) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument(
        fmt::format("a table row of {} cells under {} columns", cells.size(), columns_.size()));
  }
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!cells[c].note.empty() && !columns_[c].notes) {
      throw std::invalid_argument(
          fmt::format("a trust note in column '{}', which has none", columns_[c].name));
    }
  }
  rows_.push_back(std::move(cells));
  if (!html.id.empty() || !html.css_class.empty()) {
    row_html_.resize(rows_.size());
    row_html_.back() = std::move(html);
  }
}

const RowHtml& Table::RowHtmlOf(std::size_t row) const {
  static const RowHtml kNone;
  return row < row_html_.size() ? row_html_[row] : kNone;
}

std::string ShownValue(const Column& column, const CellValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  const double number = std::holds_alternative<std::int64_t>(value)
                            ? static_cast<double>(std::get<std::int64_t>(value))
                            : std::get<double>(value);
  if (const auto* whole = std::get_if<std::int64_t>(&value);
      whole && (column.hint == ColumnHint::kCount || column.hint == ColumnHint::kText ||
                (column.hint == ColumnHint::kNumber && column.decimals < 0))) {
    return column.sign && *whole > 0 ? fmt::format("+{}", *whole) : std::to_string(*whole);
  }
  const int decimals = column.decimals >= 0 ? column.decimals : DefaultDecimals(column.hint);
  switch (column.hint) {
    case ColumnHint::kRatio:
      return Number(number, decimals, false) + "x";
    case ColumnHint::kPercent:
      return Number(number, decimals, column.sign) + "%";
    case ColumnHint::kText:
      return fmt::format("{}", number);
    case ColumnHint::kCount:
    case ColumnHint::kMs:
    case ColumnHint::kNumber:
      return Number(number, decimals, column.sign);
  }
  return "";
}

std::string DataValue(const Column& column, const CellValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* whole = std::get_if<std::int64_t>(&value)) return std::to_string(*whole);
  const double number = std::get<double>(value);
  if (column.data_decimals < 0) return fmt::format("{}", number);
  return fmt::format("{:.{}f}", number, column.data_decimals);
}

bool AlignsRight(const Column& column) {
  if (column.align != Align::kByHint) return column.align == Align::kRight;
  return column.hint != ColumnHint::kText;
}

}  // namespace ditbench
