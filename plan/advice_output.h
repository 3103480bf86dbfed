// Printing an Advice (plan/advisor.h): the table people read and the versioned JSON scripts
// read ({"format": "ditbench-advice", "version": 1, ...}; within version 1 keys are only ever
// added, so a reader ignores keys it does not know).
#pragma once

#include <iosfwd>
#include <string>

#include "base/table_printers.h"
#include "plan/advisor.h"

namespace ditbench {

// The table: per group its ranked trials (then the excluded ones, with why), the
// recommendation and what to measure next. JSON: the versioned document. Any other format of
// kTableFormats (Markdown, CSV, ...): every group's trials in one table (base/table_printers.h),
// a "group" column first, a speedup's doubts its note.
void WriteAdvice(const Advice& advice, TableFormat format, const std::string& sweep,
                 const std::string& device, std::ostream& out);
void WriteAdviceTable(const Advice& advice, std::ostream& out);
void WriteAdviceJson(const Advice& advice, const std::string& sweep, const std::string& device,
                     std::ostream& out);

}  // namespace ditbench
