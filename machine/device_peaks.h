// Dense peak throughput by device and precision, the denominator of MFU. Figures are vendor
// dense (non-sparse) peaks; see docs/measurement.md for sources. Unknown devices, and CPUs,
// have no entry: their MFU is null, never a guess.
#pragma once

#include <optional>
#include <string_view>

#include "experiments/trial.h"

namespace ditbench {

// Dense peak TFLOPS of `device_name` (as the driver reports it) at `precision`, if known.
std::optional<double> DensePeakTflops(std::string_view device_name, Precision precision);

}  // namespace ditbench
