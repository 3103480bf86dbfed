// How A's and B's machines checked (`ditbench selfcheck`, storage/selfcheck_store.h), for
// `compare`: a row whose verdict differs between the two sides' checks (capped clocks on one,
// a failed row) is a difference between A and B like another build or driver.
//
// A side's check of a device is the newest stored at or before the end of the side's newest
// campaign (a check made later says nothing about how it ran; an unfinished campaign takes the
// newest). Devices pair by name; when each side ran on one device, those two pair whatever
// their names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "storage/selfcheck_store.h"

namespace ditbench {

// The newest check of each device of `rows` in `store`, as above; devices without one are
// left out.
std::map<std::string, SelfcheckRecord> SideChecks(SelfcheckStore& store,
                                                  const std::vector<CampaignInfo>& campaigns,
                                                  const std::vector<ResultRow>& rows);

// One difference per row whose verdict differs ("selfcheck H100: clocks", A "warn: SM 1410 of
// 1980 MHz", B "pass: ..."), and one when a device was checked on one side only ("selfcheck
// H100", "(none)", "all pass" or what did not pass). Nothing when neither side was checked.
std::vector<SettingDifference> SelfcheckDifferences(
    const std::map<std::string, SelfcheckRecord>& a,
    const std::map<std::string, SelfcheckRecord>& b);

}  // namespace ditbench
