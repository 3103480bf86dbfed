#include "base/table_printers.h"

#include <algorithm>
#include <initializer_list>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"

namespace ditbench {
namespace {

// The most characters of a console cell before it is cut (ForTerminal caps it again).
constexpr std::size_t kTextCellBytes = 4096;

// The value as a person reads it, with the note after it: "23.90x (busy)".
std::string WithNote(const Column& column, const Cell& cell) {
  std::string text = ShownValue(column, cell.value);
  if (cell.note.empty()) return text;
  if (!text.empty()) text += ' ';
  return text.append("(").append(cell.note).append(")");
}

// Characters (code points) of valid UTF-8 text: what one console column holds, near enough.
std::size_t Characters(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

std::string ConsoleCell(const Column& column, const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell.value) && cell.note.empty()) return "-";
  std::string flat = WithNote(column, cell);
  if (flat.size() > kTextCellBytes) flat.resize(kTextCellBytes);
  std::replace_if(
      flat.begin(), flat.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  flat = ForTerminal(flat);
  if (column.max_chars > 3 && Characters(flat) > column.max_chars) {
    std::size_t cut = 0, kept = 0;  // at a character boundary, room left for "..."
    while (cut < flat.size() && kept < column.max_chars - 3) {
      ++cut;
      while (cut < flat.size() && (static_cast<unsigned char>(flat[cut]) & 0xc0) == 0x80) ++cut;
      ++kept;
    }
    flat = flat.substr(0, cut) + "...";
  }
  return flat;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string NoteName(const Column& column) { return column.name + "_note"; }

nlohmann::ordered_json JsonValue(const CellValue& value) {
  if (const auto* whole = std::get_if<std::int64_t>(&value)) return *whole;
  if (const auto* number = std::get_if<double>(&value)) return *number;
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return nullptr;
}

// A character of cell text and what a format writes for it.
struct Escape {
  char c;
  std::string_view with;
};
constexpr Escape kHtmlEscapes[] = {
    {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}};
// Markdown: every character that opens markup (a link or image's brackets, parentheses and
// '!', code, emphasis, a table cell's end) is escaped and HTML becomes text, so that a stored
// text (a worker's error) pasted as a table shows as written: never a live image or link.
constexpr Escape kMarkdownEscapes[] = {{'|', "\\|"},  {'\\', "\\\\"}, {'*', "\\*"},   {'_', "\\_"},
                                       {'`', "\\`"},  {'[', "\\["},   {']', "\\]"},   {'(', "\\("},
                                       {')', "\\)"},  {'!', "\\!"},   {'&', "&amp;"}, {'<', "&lt;"},
                                       {'>', "&gt;"}, {'\n', "<br>"}, {'\r', "<br>"}};

template <std::size_t N>
std::string Escaped(std::string_view text, const Escape (&escapes)[N]) {
  std::string escaped;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // one break
    const Escape* e =
        std::find_if(escapes, escapes + N, [&](const Escape& x) { return x.c == text[i]; });
    if (e == escapes + N) {
      escaped += text[i];
    } else {
      escaped += e->with;
    }
  }
  return escaped;
}

}  // namespace

std::string HtmlText(std::string_view text) { return Escaped(text, kHtmlEscapes); }

std::string MarkdownText(std::string_view text) { return Escaped(text, kMarkdownEscapes); }

const TableFormatInfo& FormatInfo(TableFormat format) {
  for (const TableFormatInfo& info : kTableFormats)
    if (info.value == format) return info;
  throw std::invalid_argument("a table format with no row in kTableFormats");
}

std::optional<TableFormat> ParseTableFormat(std::string_view name) {
  for (const TableFormatInfo& info : kTableFormats)
    if (info.name == name) return info.value;
  return std::nullopt;
}

std::string TextCell(const Column& column, const Cell& cell) { return ConsoleCell(column, cell); }

std::size_t TextCharacters(std::string_view text) { return Characters(text); }

void AppendTextLine(const std::vector<Column>& columns, const std::vector<std::size_t>& widths,
                    const std::vector<std::string_view>& cells, std::string_view indent,
                    std::string& line) {
  const std::size_t start = line.size();
  line += indent;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line.append(columns[c].gap, ' ');
    const std::size_t pad = widths[c] - std::min(widths[c], Characters(cells[c]));
    if (AlignsRight(columns[c])) line.append(pad, ' ');
    line += cells[c];
    if (!AlignsRight(columns[c])) line.append(pad, ' ');
  }
  const std::size_t last = line.find_last_not_of(' ');
  line.erase(last == std::string::npos || last < start ? start : last + 1);
  line += '\n';
}

void PrintText(const Table& table, std::ostream& out, const TextOptions& options) {
  const std::vector<Column>& columns = table.columns();
  std::vector<std::size_t> width(columns.size());
  std::vector<std::string> header;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    header.push_back(ForTerminal(columns[c].name));
    width[c] = std::max(columns[c].min_width, options.header ? Characters(header.back()) : 0);
  }
  std::vector<std::vector<std::string>> text;
  text.reserve(table.rows().size());
  for (const std::vector<Cell>& row : table.rows()) {
    std::vector<std::string>& line = text.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      line.push_back(ConsoleCell(columns[c], row[c]));
      width[c] = std::max(width[c], Characters(line.back()));
    }
  }
  std::string line;
  std::vector<std::string_view> cells;
  auto print_line = [&](const std::vector<std::string>& text_cells) {
    cells.assign(text_cells.begin(), text_cells.end());
    line.clear();
    AppendTextLine(columns, width, cells, options.indent, line);
    out << line;
  };
  if (options.header) print_line(header);
  for (const std::vector<std::string>& row_text : text) print_line(row_text);
}

CsvWriter::CsvWriter(std::ostream& out, std::vector<Column> columns, CsvOptions options)
    : out_(out), columns_(std::move(columns)), options_(options) {}

void CsvWriter::Header() {
  std::string record;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) record += ',';
    record += CsvField(columns_[c].name);
    if (columns_[c].notes) record.append(",").append(CsvField(NoteName(columns_[c])));
  }
  out_ << record << options_.line_end;
}

void CsvWriter::Row(const std::vector<Cell>& cells) {
  std::string record;
  for (std::size_t c = 0; c < cells.size() && c < columns_.size(); ++c) {
    if (c > 0) record += ',';
    record += CsvField(DataValue(columns_[c], cells[c].value));
    if (columns_[c].notes) record.append(",").append(CsvField(cells[c].note));
  }
  out_ << record << options_.line_end;
}

void PrintCsv(const Table& table, std::ostream& out, const CsvOptions& options) {
  CsvWriter writer(out, table.columns(), options);
  writer.Header();
  for (const std::vector<Cell>& row : table.rows()) writer.Row(row);
}

JsonWriter::JsonWriter(std::ostream& out, std::vector<Column> columns)
    : out_(out), columns_(std::move(columns)) {}

void JsonWriter::Row(const std::vector<Cell>& cells) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t c = 0; c < cells.size() && c < columns_.size(); ++c) {
    object[columns_[c].name] = JsonValue(cells[c].value);
    if (columns_[c].notes) {
      object[NoteName(columns_[c])] =
          cells[c].note.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(cells[c].note);
    }
  }
  const std::string text = object.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string piece = rows_++ == 0 ? "[\n  " : ",\n  ";
  for (char ch : text) {  // one level deeper: inside the array
    piece += ch;
    if (ch == '\n') piece += "  ";
  }
  out_ << piece;
}

void JsonWriter::Finish() { out_ << (rows_ == 0 ? "[]\n" : "\n]\n"); }

void PrintJson(const Table& table, std::ostream& out) {
  JsonWriter writer(out, table.columns());
  for (const std::vector<Cell>& row : table.rows()) writer.Row(row);
  writer.Finish();
}

namespace {

// The value and its note escaped; the parentheses around the note are the printer's own.
std::string MarkdownCell(const Column& column, const Cell& cell) {
  std::string text = MarkdownText(ShownValue(column, cell.value));
  if (cell.note.empty()) return text;
  if (!text.empty()) text += ' ';
  return text.append("(").append(MarkdownText(cell.note)).append(")");
}

std::string HtmlCell(const Column& column, const Cell& cell, std::string_view none) {
  std::string html = std::holds_alternative<std::monostate>(cell.value)
                         ? HtmlText(none)
                         : HtmlText(ShownValue(column, cell.value));
  if (cell.note.empty()) return html;
  if (!html.empty()) html += ' ';
  return html.append("<span class=\"note\">(").append(HtmlText(cell.note)).append(")</span>");
}

}  // namespace

void PrintMarkdown(const Table& table, std::ostream& out) {
  const std::vector<Column>& columns = table.columns();
  std::string text = "|";
  for (const Column& column : columns)
    text.append(" ").append(MarkdownText(column.name)).append(" |");
  std::vector<std::vector<std::string>> cells;
  std::vector<bool> has_value(columns.size(), false);
  for (const std::vector<Cell>& row : table.rows()) {
    std::vector<std::string>& line = cells.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      line.push_back(MarkdownCell(columns[c], row[c]));
      if (!line.back().empty()) has_value[c] = true;
    }
  }
  // A column with no value in any row is not a column of numbers: left, as text is.
  text += "\n|";
  for (std::size_t c = 0; c < columns.size(); ++c)
    text += AlignsRight(columns[c]) && has_value[c] ? " ---: |" : " --- |";
  text += "\n";
  for (const std::vector<std::string>& line : cells) {
    text += "|";
    for (const std::string& cell : line) {
      if (!cell.empty()) text.append(" ").append(cell);
      text += " |";
    }
    text += "\n";
  }
  out << text;
}

void PrintHtml(const Table& table, std::ostream& out) { PrintHtml(table, out, HtmlOptions{}); }

void PrintHtml(const Table& table, std::ostream& out, const HtmlOptions& options) {
  out << HtmlTable(table, options);
}

namespace {

// ' class="..."' of the classes given, or "" for none.
std::string ClassAttribute(std::initializer_list<std::string_view> classes) {
  std::string joined;
  for (std::string_view c : classes) {
    if (c.empty()) continue;
    if (!joined.empty()) joined += ' ';
    joined += c;
  }
  return joined.empty() ? "" : fmt::format(" class=\"{}\"", HtmlText(joined));
}

std::string TitleAttribute(std::string_view title) {
  return title.empty() ? "" : fmt::format(" title=\"{}\"", HtmlText(title));
}

// A header may break after an underscore: a long metric name ("cache_hit_rate (fraction)")
// wraps there rather than widen its column.
std::string HeaderCell(const Column& column) {
  std::string name;
  for (const char c : HtmlText(column.name)) {
    name += c;
    if (c == '_') name += "<wbr>";
  }
  return fmt::format("<th{}{}>{}</th>", ClassAttribute({AlignsRight(column) ? "num" : ""}),
                     TitleAttribute(column.description), name);
}

std::string BodyCell(const Column& column, const Cell& cell, std::string_view none) {
  const CellHtml* html = cell.html();
  const std::string_view num = AlignsRight(column) ? "num" : "";
  if (!html)
    return fmt::format("<td{}>{}</td>", ClassAttribute({num, column.html_class}),
                       HtmlCell(column, cell, none));
  return fmt::format("<td{}{}>{}</td>", ClassAttribute({num, column.html_class, html->css_class}),
                     TitleAttribute(html->title),
                     html->markup.empty() ? HtmlCell(column, cell, none) : html->markup);
}

}  // namespace

std::string HtmlTable(const Table& table, const HtmlOptions& options) {
  const std::vector<Column>& columns = table.columns();
  std::string html = fmt::format("<table{}>\n<thead>\n<tr>", ClassAttribute({options.table_class}));
  for (const Column& column : columns) html += HeaderCell(column);
  html += "</tr>\n</thead>\n<tbody>\n";
  for (std::size_t r = 0; r < table.rows().size(); ++r) {
    const RowHtml& row_html = table.RowHtmlOf(r);
    html += fmt::format("<tr{}{}>",
                        row_html.id.empty() ? "" : fmt::format(" id=\"{}\"", HtmlText(row_html.id)),
                        ClassAttribute({row_html.css_class}));
    const std::vector<Cell>& row = table.rows()[r];
    for (std::size_t c = 0; c < row.size(); ++c) html += BodyCell(columns[c], row[c], options.none);
    html += "</tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

void PrintTable(const Table& table, TableFormat format, std::ostream& out) {
  FormatInfo(format).print(table, out);
}

void PrintAs(TableFormat format, const std::vector<OwnFormat>& own,
             const std::function<Table()>& table, std::ostream& out) {
  for (const OwnFormat& o : own)
    if (o.format == format) return o.write(out);
  if (!table) {
    throw std::invalid_argument(
        fmt::format("no writer of the format '{}'", FormatInfo(format).name));
  }
  PrintTable(table(), format, out);
}

}  // namespace ditbench
