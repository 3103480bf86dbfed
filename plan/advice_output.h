// Printing an Advice (plan/advisor.h): the table people read and the versioned JSON scripts
// read ({"format": "ditbench-advice", "version": 1, ...}; within version 1 keys are only ever
// added, so a reader ignores keys it does not know).
#pragma once

#include <iosfwd>
#include <string>

#include "plan/advisor.h"

namespace ditbench {

// The table: per group its ranked trials (then the excluded ones, with why), the
// recommendation and what to measure next. Markdown: every group's trials in one pipe table
// (base/table_printers.h), a "group" column first.
void WriteAdviceTable(const Advice& advice, std::ostream& out);
void WriteAdviceMarkdown(const Advice& advice, std::ostream& out);
void WriteAdviceJson(const Advice& advice, const std::string& sweep, const std::string& device,
                     std::ostream& out);

}  // namespace ditbench
