#include "base/table.h"
#include "base/table_printers.h"

#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace ditbench::table_test {
namespace {

// Three rows under one column of each hint: text that would break every format (a pipe, a
// comma, quotes, a newline, markup), a note on a number, and empty cells.
class TableTest : public ::testing::Test {
 protected:
  static Table Sample() {
    Table table({{.name = "name"},
                 {.name = "latency_ms", .hint = ColumnHint::kMs},
                 {.name = "speedup", .hint = ColumnHint::kRatio, .notes = true},
                 {.name = "share", .hint = ColumnHint::kPercent},
                 {.name = "trials", .hint = ColumnHint::kCount}});
    table.AddRow({"a|b", 40.657, 1.85, 12.34, 3});
    table.AddRow({"say \"hi\", then\nbye", 5.0, Cell(23.9, "busy"), 100.0, 12});
    table.AddRow({"<script>", Cell(), Cell(), Cell(), Cell()});
    return table;
  }

  template <typename Printer>
  static std::string Printed(const Table& table, Printer print) {
    std::ostringstream out;
    print(table, out);
    return out.str();
  }
};

TEST_F(TableTest, TextAlignsTextLeftNumbersRightAndShowsNotesAndDashes) {
  EXPECT_EQ(Printed(Sample(), [](const Table& t, std::ostream& o) { PrintText(t, o); }),
            "name                latency_ms        speedup   share  trials\n"
            "a|b                      40.66          1.85x   12.3%       3\n"
            "say \"hi\", then bye        5.00  23.90x (busy)  100.0%      12\n"
            "<script>                     -              -       -       -\n");
}

TEST_F(TableTest, CsvQuotesPerRfc4180AndPutsTheNoteInItsOwnField) {
  EXPECT_EQ(Printed(Sample(), [](const Table& t, std::ostream& o) { PrintCsv(t, o); }),
            "name,latency_ms,speedup,speedup_note,share,trials\r\n"
            "a|b,40.657,1.85,,12.34,3\r\n"
            "\"say \"\"hi\"\", then\nbye\",5,23.9,busy,100,12\r\n"
            "<script>,,,,,\r\n");
}

TEST_F(TableTest, JsonHoldsNumbersNullsAndTheNoteField) {
  EXPECT_EQ(Printed(Sample(), [](const Table& t, std::ostream& o) { PrintJson(t, o); }),
            R"([
  {
    "name": "a|b",
    "latency_ms": 40.657,
    "speedup": 1.85,
    "speedup_note": null,
    "share": 12.34,
    "trials": 3
  },
  {
    "name": "say \"hi\", then\nbye",
    "latency_ms": 5.0,
    "speedup": 23.9,
    "speedup_note": "busy",
    "share": 100.0,
    "trials": 12
  },
  {
    "name": "<script>",
    "latency_ms": null,
    "speedup": null,
    "speedup_note": null,
    "share": null,
    "trials": null
  }
]
)");
  EXPECT_EQ(
      Printed(Table({{.name = "x"}}), [](const Table& t, std::ostream& o) { PrintJson(t, o); }),
      "[]\n");
}

TEST_F(TableTest, MarkdownIsAPipeTableWithEscapedCellsAndRightAlignedNumbers) {
  EXPECT_EQ(Printed(Sample(), [](const Table& t, std::ostream& o) { PrintMarkdown(t, o); }),
            "| name | latency\\_ms | speedup | share | trials |\n"
            "| --- | ---: | ---: | ---: | ---: |\n"
            "| a\\|b | 40.66 | 1.85x | 12.3% | 3 |\n"
            "| say \"hi\", then<br>bye | 5.00 | 23.90x (busy) | 100.0% | 12 |\n"
            "| &lt;script&gt; | | | | |\n");
}

// `query --format markdown` right-aligned a column of numbers whose every cell was empty (a
// failed trial's latency) as if it held numbers (issue 34).
TEST_F(TableTest, MarkdownAlignsAColumnWithNoValueLeft) {
  Table table({{.name = "status"},
               {.name = "latency_ms", .hint = ColumnHint::kMs},
               {.name = "speedup", .hint = ColumnHint::kRatio, .notes = true},
               {.name = "trials", .hint = ColumnHint::kCount}});
  table.AddRow({"failed", Cell(), Cell(CellValue{}, "busy"), 2});
  table.AddRow({"crashed", Cell(), Cell(), 1});
  EXPECT_EQ(Printed(table, [](const Table& t, std::ostream& o) { PrintMarkdown(t, o); }),
            "| status | latency\\_ms | speedup | trials |\n"
            "| --- | --- | ---: | ---: |\n"
            "| failed | | (busy) | 2 |\n"
            "| crashed | | | 1 |\n");
}

// A worker's error text with image, link and HTML markup, pasted as a Markdown table, showed a
// live image (fetched from the worker's choice of server) and a link (issue 49). Every
// character that opens markup is escaped, in the value and in its note.
TEST_F(TableTest, MarkdownShowsImageLinkAndHtmlMarkupAsText) {
  const std::string hostile = "![x](http://e/i.png) [a](http://e) <img src=x> `c` *b* _u_";
  Table table({{.name = "error", .notes = true}});
  table.AddRow({Cell(hostile, hostile)});
  const std::string printed =
      Printed(table, [](const Table& t, std::ostream& o) { PrintMarkdown(t, o); });
  const std::string escaped =
      "\\!\\[x\\]\\(http://e/i.png\\) \\[a\\]\\(http://e\\) &lt;img src=x&gt; \\`c\\` "
      "\\*b\\* \\_u\\_";
  EXPECT_EQ(printed, "| error |\n| --- |\n| " + escaped + " (" + escaped + ") |\n");
  for (const char* live : {"![", "](", "<img", "[a]", "`c`"})
    EXPECT_EQ(printed.find(live), std::string::npos) << live;
  EXPECT_EQ(MarkdownText("[a](http://e)"), "\\[a\\]\\(http://e\\)");
}

TEST_F(TableTest, HtmlEscapesEveryTextAndMarksNumbersAndNotes) {
  EXPECT_EQ(Printed(Sample(), [](const Table& t, std::ostream& o) { PrintHtml(t, o); }),
            "<table>\n<thead>\n<tr><th>name</th><th class=\"num\">latency_<wbr>ms</th>"
            "<th class=\"num\">speedup</th><th class=\"num\">share</th>"
            "<th class=\"num\">trials</th></tr>\n</thead>\n<tbody>\n"
            "<tr><td>a|b</td><td class=\"num\">40.66</td><td class=\"num\">1.85x</td>"
            "<td class=\"num\">12.3%</td><td class=\"num\">3</td></tr>\n"
            "<tr><td>say &quot;hi&quot;, then\nbye</td><td class=\"num\">5.00</td>"
            "<td class=\"num\">23.90x <span class=\"note\">(busy)</span></td>"
            "<td class=\"num\">100.0%</td><td class=\"num\">12</td></tr>\n"
            "<tr><td>&lt;script&gt;</td><td class=\"num\"></td><td class=\"num\"></td>"
            "<td class=\"num\"></td><td class=\"num\"></td></tr>\n"
            "</tbody>\n</table>\n");
}

// The report prints its tables through PrintHtml with its class for the table element,
// escaped like every text.
TEST_F(TableTest, HtmlTakesTheTableElementsClass) {
  const std::string html = HtmlTable(Sample(), {.table_class = "comparison"});
  EXPECT_EQ(html.rfind("<table class=\"comparison\">\n<thead>", 0), 0u) << html;
  EXPECT_EQ(html.substr(html.find("<thead>")),
            HtmlTable(Sample()).substr(HtmlTable(Sample()).find("<thead>")));
  EXPECT_EQ(HtmlTable(Sample(), {.table_class = "a\"b"}).rfind("<table class=\"a&quot;b\">", 0),
            0u);
}

// A page's extras reach the HTML printer alone: a column's description and class, a row's
// anchor and class, a cell's markup, class and title; what a cell with no value shows. The
// other printers print the values.
TEST_F(TableTest, HtmlKeepsAPagesExtrasAndTheOtherPrintersTheValues) {
  Table table({{.name = "trial", .description = "the \"key\"", .html_class = "more"},
               {.name = "ms", .hint = ColumnHint::kMs},
               {.name = "status"}});
  table.AddRow({Cell("k1").WithHtml({.markup = "<code>k1</code>"}), Cell(1.5),
                Cell("ok").WithHtml({.css_class = "status-ok", .title = "a <b>"})},
               {.id = "trial-1-k1", .css_class = "best"});
  table.AddRow({Cell("k2"), Cell(), Cell("failed")});
  EXPECT_EQ(HtmlTable(table, {.none = "-"}),
            "<table>\n<thead>\n<tr><th title=\"the &quot;key&quot;\">trial</th>"
            "<th class=\"num\">ms</th><th>status</th></tr>\n</thead>\n<tbody>\n"
            "<tr id=\"trial-1-k1\" class=\"best\"><td class=\"more\"><code>k1</code></td>"
            "<td class=\"num\">1.50</td><td class=\"status-ok\" title=\"a &lt;b&gt;\">ok</td>"
            "</tr>\n"
            "<tr><td class=\"more\">k2</td><td class=\"num\">-</td><td>failed</td></tr>\n"
            "</tbody>\n</table>\n");
  EXPECT_EQ(Printed(table, [](const Table& t, std::ostream& o) { PrintCsv(t, o); }),
            "trial,ms,status\r\nk1,1.5,ok\r\nk2,,failed\r\n");
  EXPECT_EQ(table.RowHtmlOf(1).id, "");
  EXPECT_EQ(table.RowHtmlOf(7).css_class, "");
}

TEST_F(TableTest, NumbersOfOneColumnShareTheirDecimals) {
  const Column ms{.name = "ms", .hint = ColumnHint::kMs};
  EXPECT_EQ(ShownValue(ms, 1234.5), "1234.50");
  EXPECT_EQ(ShownValue(ms, 0.004), "0.00");
  EXPECT_EQ(ShownValue(ms, std::int64_t{7}), "7.00");
  const Column change{.name = "change", .hint = ColumnHint::kPercent, .sign = true};
  EXPECT_EQ(ShownValue(change, -42.81), "-42.8%");
  EXPECT_EQ(ShownValue(change, 3.0), "+3.0%");
  const Column fine{.name = "ms", .hint = ColumnHint::kMs, .decimals = 3};
  EXPECT_EQ(ShownValue(fine, 40.0), "40.000");
  const Column count{.name = "n", .hint = ColumnHint::kCount};
  EXPECT_EQ(ShownValue(count, std::int64_t{-3}), "-3");
  // A column of no known meaning keeps the magnitude rule `query --sql` had.
  const Column any{.name = "x", .hint = ColumnHint::kNumber};
  EXPECT_EQ(ShownValue(any, 100.0), "100.0");
  EXPECT_EQ(ShownValue(any, 0.012345), "0.01235");
  EXPECT_EQ(ShownValue(any, std::int64_t{12}), "12");
}

TEST_F(TableTest, CsvDataDecimalsFixTheBareNumber) {
  Table table({{.name = "pct", .hint = ColumnHint::kPercent, .data_decimals = 3}});
  table.AddRow({2.1});
  EXPECT_EQ(
      Printed(table, [](const Table& t, std::ostream& o) { PrintCsv(t, o, {.line_end = "\n"}); }),
      "pct\n2.100\n");
}

TEST_F(TableTest, TextIsMadeSafeForTheTerminalAndCutAtMaxChars) {
  Table table({{.name = "what", .max_chars = 10}, {.name = "n", .hint = ColumnHint::kCount}});
  table.AddRow({"\x1b]0;owned\a", 1});
  table.AddRow({"0123456789abcdef", 2});
  EXPECT_EQ(
      Printed(table, [](const Table& t, std::ostream& o) { PrintText(t, o, {.indent = "  "}); }),
      "  what        n\n"
      "  \\x1b]0;...  1\n"
      "  0123456...  2\n");
}

TEST_F(TableTest, MinWidthAndGapShapeTheColumns) {
  Table table({{.name = "a", .min_width = 4}, {.name = "b", .hint = ColumnHint::kCount, .gap = 1}});
  table.AddRow({"x", 5});
  EXPECT_EQ(Printed(table, [](const Table& t, std::ostream& o) { PrintText(t, o); }),
            "a    b\nx    5\n");
}

TEST_F(TableTest, ARowOfTheWrongWidthOrANoteWhereNoneBelongsIsRefused) {
  Table table({{.name = "a"}, {.name = "b", .hint = ColumnHint::kMs}});
  EXPECT_THROW(table.AddRow({"x"}), std::invalid_argument);
  EXPECT_THROW(table.AddRow({"x", Cell(1.0, "busy")}), std::invalid_argument);
  EXPECT_TRUE(table.empty());
}

TEST_F(TableTest, FormatsAreParsedByTheirOptionNames) {
  EXPECT_TRUE(ParseTableFormat("table") == TableFormat::kText);
  EXPECT_TRUE(ParseTableFormat("markdown") == TableFormat::kMarkdown);
  EXPECT_TRUE(ParseTableFormat("html") == TableFormat::kHtml);
  EXPECT_FALSE(ParseTableFormat("md").has_value());
}

// Every row of the format table, a format added later included, shows a figure's doubt: the
// note beside the number ("23.90x (busy)") or in a "speedup_note" field of its own.
TEST_F(TableTest, EveryFormatOfTheTableCarriesANote) {
  for (const TableFormatInfo& format : kTableFormats) {
    EXPECT_TRUE(ParseTableFormat(format.name) == format.value) << format.name;
    const std::string printed = Printed(Sample(), format.print);
    EXPECT_NE(printed.find("busy"), std::string::npos) << format.name << ":\n" << printed;
    const bool beside = printed.find("(busy)") != std::string::npos;
    const bool field = printed.find("speedup_note") != std::string::npos;
    EXPECT_TRUE(beside || field) << format.name << ":\n" << printed;
  }
}

TEST_F(TableTest, PrintAsWritesAFormatItsOwnWayElseByTheTablesPrinter) {
  const std::vector<OwnFormat> own = {
      {TableFormat::kJson, [](std::ostream& out) { out << "{\"own\": true}\n"; }}};
  std::ostringstream json, csv;
  PrintAs(TableFormat::kJson, own, Sample, json);
  PrintAs(TableFormat::kCsv, own, Sample, csv);
  EXPECT_EQ(json.str(), "{\"own\": true}\n");
  EXPECT_EQ(csv.str(), Printed(Sample(), [](const Table& t, std::ostream& o) { PrintCsv(t, o); }));
  std::ostringstream none;
  EXPECT_THROW(PrintAs(TableFormat::kHtml, own, {}, none), std::invalid_argument);
}

}  // namespace
}  // namespace ditbench::table_test
