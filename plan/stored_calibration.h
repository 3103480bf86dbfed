// Which stored `ditbench selfcheck` calibrates `plan` (plan/calibration.h): the newest one of
// the device on this host (CPU: only this host's, since every CPU is named "cpu"; a GPU: this
// host's, else the newest of the same GPU name on any host), used only when its worker and
// host-load rows passed: a selfcheck beside another load measured that load. Read-only; the
// database is untrusted (a row that does not parse is not used, with the reason).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "plan/calibration.h"

namespace ditbench {

struct StoredCalibration {
  std::optional<PlanCalibration> calibration;
  // Why there is none, as `plan` prints it after "uncalibrated prior: "; empty when there is.
  std::string why_not;
};

StoredCalibration LoadCalibration(const std::filesystem::path& db, const std::string& device,
                                  const std::string& host);

}  // namespace ditbench
