// What `plan` assumes about a GPU machine it has no measurements of (the prior): how fast a
// rank computes at its size, and what a collective costs on the link between the ranks.
//
// Compute: a DiT forward reaches efficiency(n) = kMaxEfficiency * n / (n + n_half) of the
// device's dense peak, n being the elements of one rank's activation (rows x tokens per rank x
// hidden): small per-rank work leaves the GPU partly idle (launch latency, short kernels, tail
// effects). n_half grows with the device's peak (a faster GPU needs more work to fill it).
// Communication: every collective costs latency + bytes / bus bandwidth for its kind
// (plan/comm_volume.h's Collective) on the link its ranks use (NVLink, PCIe, InfiniBand), with
// bytes as the rank sends them, which is how nccl-tests defines bus bandwidth.
// Every constant and where it comes from: docs/benchmarks.md, "The planner's prior".
#pragma once

#include <array>
#include <string_view>

#include "plan/comm_volume.h"

namespace ditbench {

// A link's cost per collective kind (indexed by Collective).
struct LinkPrior {
  std::string_view name;                           // "NVLink 3 (A100 SXM, NVSwitch)"
  std::array<double, kCollectiveKinds> latency_us;  // per collective
  std::array<double, kCollectiveKinds> bus_gb_per_s;
};

// The link between the ranks of a trial of `ranks` ranks on `device` (the dense-peak table's
// names; "cpu": Gloo on loopback), when a node holds `gpus_per_node` GPUs (0: every rank on one
// node). A trial wider than a node crosses InfiniBand.
const LinkPrior& LinkFor(std::string_view device, int ranks, int gpus_per_node);

// Seconds one rank spends per step in `comm` on `link`. `gb_per_s_override` > 0 replaces the
// link's bandwidths (the latencies stay).
double CommSeconds(const CommPerStep& comm, const LinkPrior& link, double gb_per_s_override = 0);

// The fraction of `peak_tflops` (dense, at the trial's precision) a forward reaches when one
// rank's activation holds `rank_elements` elements (rows x tokens x hidden).
double ComputeEfficiency(double peak_tflops, double rank_elements);

}  // namespace ditbench
