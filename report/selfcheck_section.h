// The report's machine checks, under Campaigns: for each device the shown trials ran on, the
// newest `ditbench selfcheck` stored for it (storage/selfcheck_store.h), its rows that did not
// pass or "all pass", so that a reader sees whether the machine's numbers could be trusted.
// Nothing is rendered when no device has a stored check (older databases, goldens unchanged).
#pragma once

#include <string>
#include <vector>

#include "storage/selfcheck_store.h"

namespace ditbench {

// The section's HTML ("" when `checks` is empty). Every text is escaped.
std::string RenderSelfcheckSection(const std::vector<SelfcheckRecord>& checks);

}  // namespace ditbench
