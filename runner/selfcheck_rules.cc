#include "runner/selfcheck_rules.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "machine/device_peaks.h"

namespace ditbench {
namespace {

using Rows = std::vector<SelfcheckRow>;
using T = SelfcheckThresholds;
constexpr auto kPass = SelfcheckVerdict::kPass;
constexpr auto kWarn = SelfcheckVerdict::kWarn;
constexpr auto kFail = SelfcheckVerdict::kFail;
constexpr auto kSkip = SelfcheckVerdict::kSkip;
constexpr auto kInfo = SelfcheckVerdict::kInfo;

// Why a figure the worker did not give is missing: its reason in "skipped" (under any of
// `keys`), else the worker's failure (said once, in the worker row).
std::string WhyMissing(const SelfcheckObservations& o, std::initializer_list<const char*> keys) {
  if (!o.measurements) return "no measurements (the worker failed)";
  for (const char* key : keys) {
    const auto found = o.measurements->skipped.find(key);
    if (found != o.measurements->skipped.end()) return found->second;
  }
  return "the worker did not measure it";
}

Rows Skip(const char* name, std::string reason) { return {{name, kSkip, "", std::move(reason)}}; }

// |measured / reference - 1|, or nullopt without a reference.
std::optional<double> RelativeError(double measured, double reference) {
  if (!(reference > 0)) return std::nullopt;
  return std::abs(measured / reference - 1);
}

Rows JudgeWorker(const SelfcheckObservations& o) {
  if (!o.measurements) return {{"worker", kFail, "", o.worker_error}};
  const auto& m = *o.measurements;
  const std::string figure =
      fmt::format("{} ({}), {:.1f} s", m.device_name.empty() ? m.device : m.device_name,
                  m.torch.empty() ? "torch ?" : "torch " + m.torch, o.worker_wall_s);
  if (!m.errors.empty())
    return {{"worker", kFail, figure,
             fmt::format("{} error(s): {}", m.errors.size(), m.errors.front())}};
  return {{"worker", kPass, figure, ""}};
}

Rows JudgeTiming(const SelfcheckObservations& o) {
  const char* name = "timing fidelity";
  if (!o.measurements || !o.measurements->timing) return Skip(name, WhyMissing(o, {"timing"}));
  const auto& t = *o.measurements->timing;
  const auto gemm = RelativeError(t.gemm_ms, t.gemm_reference_ms);
  const auto forward = RelativeError(t.forward_ms, t.forward_reference_ms);
  if (!gemm || !forward) return {{name, kFail, "", "a reference time is zero"}};
  const double worst = std::max(*gemm, *forward);
  const std::string figure =
      fmt::format("gemm {:.2f}% off, forward {:.2f}% off", *gemm * 100, *forward * 100);
  const char* reference = o.gpu ? "raw CUDA events" : "a plain steady_clock loop";
  if (worst <= T::kTimingPass) return {{name, kPass, figure, ""}};
  // A gap no larger than the machine's own noise (the same clock's two halves apart) says
  // nothing about the clock: inconclusive, not a failure.
  const double noise = std::max(t.gemm_aa_pct, t.forward_aa_pct) / 100;
  if (worst <= noise)
    return {{name, kWarn, figure,
             fmt::format("inconclusive: the same clock's two halves differ by {:.2f}%, as much "
                         "as ditbench's clock and {} ({:.2f}%): the machine is unsteady (busy, "
                         "frequency scaling); run it again on an idle machine",
                         noise * 100, reference, worst * 100)}};
  return {{name, worst <= T::kTimingWarn ? kWarn : kFail, figure,
           fmt::format("ditbench's clock is {:.2f}% from {} (pass within {:.0f}%, warn within "
                       "{:.0f}%)",
                       worst * 100, reference, T::kTimingPass * 100, T::kTimingWarn * 100)}};
}

Rows JudgeGraph(const SelfcheckObservations& o) {
  const char* name = "cuda graphs";
  if (!o.gpu) return Skip(name, "CPU: no CUDA graphs");
  if (!o.measurements || !o.measurements->cuda_graph)
    return Skip(name, WhyMissing(o, {"cuda_graph"}));
  const auto& g = *o.measurements->cuda_graph;
  const std::string figure =
      fmt::format("max |diff| {:.2g}; eager {:.3f} ms, graph {:.3f} ms ({:.2f}x)", g.max_abs_diff,
                  g.eager_ms, g.graph_ms, g.graph_ms > 0 ? g.eager_ms / g.graph_ms : 0.0);
  if (g.max_abs_diff <= T::kGraphMaxAbsDiff) return {{name, kPass, figure, ""}};
  return {{name, kFail, figure,
           fmt::format("replayed steps differ from eager ones by {:.2g} (at most {:.0e} expected)",
                       g.max_abs_diff, T::kGraphMaxAbsDiff)}};
}

Rows JudgeNumerics(const SelfcheckObservations& o) {
  const char* name = "numerics";
  if (!o.measurements || !o.measurements->numerics) return Skip(name, WhyMissing(o, {"numerics"}));
  const auto& n = *o.measurements->numerics;
  const std::string figure =
      fmt::format("bf16 vs fp32 {:.3g} (bound {:.3g})", n.bf16_rel_error, n.bound);
  if (n.bf16_rel_error <= n.bound) return {{name, kPass, figure, ""}};
  return {{name, kFail, figure,
           "the bf16 output is further from fp32 than docs/measurement.md's bound"}};
}

std::string Mhz(const std::optional<unsigned>& now, const std::optional<unsigned>& max) {
  return fmt::format("{} of {} MHz", now ? std::to_string(*now) : "?",
                     max ? std::to_string(*max) : "?");
}

Rows JudgeClocks(const SelfcheckObservations& o) {
  const char* name = "clocks";
  if (!o.gpu) return Skip(name, "CPU: no GPU clocks");
  if (!o.load)
    return Skip(name, o.gpu_state_why_not.empty()
                          ? "no sample of the GPU's state while the worker ran"
                          : o.gpu_state_why_not);
  const GpuState& s = *o.load;
  const std::string figure = fmt::format("SM {}, memory {}", Mhz(s.sm_mhz, s.sm_max_mhz),
                                         Mhz(s.memory_mhz, s.memory_max_mhz));
  std::vector<std::string> why;
  if (s.sm_mhz && s.sm_max_mhz && *s.sm_mhz < T::kSmClockShare * *s.sm_max_mhz)
    why.push_back(
        fmt::format("SM clock below {:.0f}% of its maximum under load", T::kSmClockShare * 100));
  if (s.memory_mhz && s.memory_max_mhz && *s.memory_mhz < T::kMemoryClockShare * *s.memory_max_mhz)
    why.push_back(
        fmt::format("memory clock below {:.0f}% of its maximum", T::kMemoryClockShare * 100));
  // Slowdowns that cost speed whatever the clocks read: thermal, hardware, power brake.
  constexpr std::uint64_t kSlowdowns =
      kThrottleHwSlowdown | kThrottleSwThermal | kThrottleHwThermal | kThrottleHwPowerBrake;
  if (s.throttle_reasons && (*s.throttle_reasons & kSlowdowns) != 0)
    why.push_back("throttled: " + DescribeThrottleReasons(*s.throttle_reasons & kSlowdowns));
  if (s.throttle_reasons && (*s.throttle_reasons & kThrottleApplicationClocks) != 0 && s.sm_mhz &&
      s.sm_max_mhz && *s.sm_mhz < *s.sm_max_mhz)
    why.push_back("capped by application clocks (nvidia-smi -ac)");
  if (why.empty()) return {{name, kPass, figure, ""}};
  std::string reason = why.front();
  for (std::size_t i = 1; i < why.size(); ++i) reason += "; " + why[i];
  return {{name, kWarn, figure, reason}};
}

std::string OnOff(const std::optional<bool>& mode) { return !mode ? "?" : *mode ? "on" : "off"; }

Rows JudgeGpuMode(const SelfcheckObservations& o) {
  const char* name = "gpu mode";
  if (!o.gpu) return Skip(name, "CPU: no GPU");
  const auto& state = o.load ? o.load : o.idle;
  if (!state) return Skip(name, o.gpu_state_why_not.empty() ? "no GPU state" : o.gpu_state_why_not);
  const std::string figure =
      fmt::format("persistence {}, ECC {}, MIG {}", OnOff(state->persistence), OnOff(state->ecc),
                  OnOff(state->mig));
  if (state->mig.value_or(false))
    return {{name, kWarn, figure,
             "MIG is on: a slice of the GPU, so the device's peaks and other runs' figures do "
             "not apply"}};
  if (!state->persistence.value_or(true))
    return {{name, kWarn, figure,
             "persistence mode is off: the driver unloads between programs, so each start is "
             "slower and clocks may start low (nvidia-smi -pm 1)"}};
  return {{name, kPass, figure, ""}};
}

Rows JudgeEnergy(const SelfcheckObservations& o) {
  const char* name = "energy";
  if (!o.gpu) return Skip(name, "CPU: no energy counter");
  if (!o.energy)
    return Skip(name, o.energy_why_not.empty() ? "no energy counter" : o.energy_why_not);
  if (!(o.energy->joules > 0))
    return {{name, kFail, fmt::format("0 J over {:.1f} s", o.energy->window_ms / 1000),
             "NVML's energy counter did not advance while the GPU worked: energy per image "
             "would read 0"}};
  const double watts = o.energy->joules / (o.energy->window_ms / 1000);
  const std::optional<double> idle = o.idle ? o.idle->power_w : std::nullopt;
  const std::optional<double> limit = o.load && o.load->power_limit_w ? o.load->power_limit_w
                                      : o.idle                        ? o.idle->power_limit_w
                                                                      : std::nullopt;
  const std::string figure = fmt::format(
      "{:.0f} J, {:.0f} W average (idle {}, limit {})", o.energy->joules, watts,
      idle ? fmt::format("{:.0f} W", *idle) : "?", limit ? fmt::format("{:.0f} W", *limit) : "?");
  if (limit && watts > T::kPowerOverLimit * *limit)
    return {{name, kWarn, figure,
             "the average power is above the board limit: the counter over-reads"}};
  if (idle && watts < *idle)
    return {{name, kWarn, figure,
             "the average power under load is below the idle power: the counter under-reads"}};
  return {{name, kPass, figure, ""}};
}

Rows JudgeMatmul(const SelfcheckObservations& o) {
  const char* name = "matmul";
  if (!o.measurements || !o.measurements->throughput ||
      o.measurements->throughput->matmul_tflops.empty())
    return Skip(name, WhyMissing(o, {"matmul", "throughput"}));
  const auto& m = *o.measurements;
  const auto& t = *m.throughput;
  std::string figure = fmt::format("{}^3:", t.matmul_n);
  for (const auto& [precision, tflops] : t.matmul_tflops)
    figure += fmt::format(" {} {:.1f}", precision, tflops);
  figure += " TFLOP/s";
  if (!o.gpu) return {{name, kInfo, figure, "CPU: no peak to judge it against"}};
  const auto bf16 = t.matmul_tflops.find("bf16");
  const auto peak = DensePeakTflops(m.device_name, Precision::kBf16);
  if (bf16 == t.matmul_tflops.end() || !peak)
    return {{name, kInfo, figure, "no known bf16 dense peak for this device to compare with"}};
  const double share = bf16->second / *peak;
  figure += fmt::format(" ({:.0f}% of {:.0f} peak)", share * 100, *peak);
  if (share >= T::kMatmulPeakShare) return {{name, kPass, figure, ""}};
  return {{name, kWarn, figure,
           fmt::format("bf16 matmul below {:.0f}% of the device's dense peak",
                       T::kMatmulPeakShare * 100)}};
}

Rows JudgeMemory(const SelfcheckObservations& o) {
  const char* name = "memory bandwidth";
  if (!o.measurements || !o.measurements->throughput || !o.measurements->throughput->memory_gbps)
    return Skip(name, WhyMissing(o, {"memory", "throughput"}));
  return {{name, kInfo, fmt::format("{:.0f} GB/s", *o.measurements->throughput->memory_gbps),
           "no table of memory peaks to judge it against"}};
}

// One row per SDPA backend: measured (info: shown, not judged), or skipped under
// "attention.<backend>" with why.
Rows JudgeAttention(const SelfcheckObservations& o) {
  if (!o.measurements) return Skip("attention", WhyMissing(o, {"attention"}));
  std::map<std::string, SelfcheckRow> rows;  // by backend
  if (o.measurements->throughput)
    for (const auto& [backend, tflops] : o.measurements->throughput->attention_tflops)
      rows[backend] = {"attention (" + backend + ")", kInfo, fmt::format("{:.2f} TFLOP/s", tflops),
                       ""};
  constexpr std::string_view kPrefix = "attention.";
  for (const auto& [key, reason] : o.measurements->skipped) {
    if (key.size() <= kPrefix.size() || key.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string backend = key.substr(kPrefix.size());
    rows.try_emplace(backend, SelfcheckRow{"attention (" + backend + ")", kSkip, "", reason});
  }
  if (rows.empty()) return Skip("attention", WhyMissing(o, {"attention", "throughput"}));
  Rows out;
  for (auto& [backend, row] : rows) out.push_back(std::move(row));
  return out;
}

Rows JudgeComm(const SelfcheckObservations& o) {
  const char* name = "communication";
  if (!o.measurements || !o.measurements->comm) {
    if (o.measurements && o.measurements->skipped.count("comm") == 0) return {};  // one rank
    return Skip(name, WhyMissing(o, {"comm"}));
  }
  const auto& c = *o.measurements->comm;
  return {{name, kInfo,
           fmt::format("{} ranks: all-to-all {:.1f} GB/s, all-gather {:.1f} GB/s, {:.1f} us",
                       c.world_size, c.all_to_all_gbps, c.all_gather_gbps, c.latency_us),
           ""}};
}

Rows JudgeHostLoad(const SelfcheckObservations& o) {
  const char* name = "host load";
  if (!o.health) return Skip(name, "the host was not sampled");
  const std::string figure = o.health->Describe(o.gpu_uuids);
  if (o.health->BusyOn(o.gpu_uuids))
    return {{name, kWarn, figure,
             "other programs use the CPU or these GPUs: measurements here are suspect"}};
  return {{name, kPass, figure, ""}};
}

Rows JudgeGovernor(const SelfcheckObservations& o) {
  const char* name = "cpu governor";
  if (o.cpu_governors.empty())
    return Skip(name, "no cpufreq governor readable (a VM or a container)");
  std::string figure;
  for (const auto& [governor, cpus] : o.cpu_governors)
    figure += fmt::format("{}{} on {} CPU(s)", figure.empty() ? "" : ", ", governor, cpus);
  const bool performance = o.cpu_governors.size() == 1 && o.cpu_governors.count("performance") == 1;
  if (performance) return {{name, kPass, figure, ""}};
  return {{name, kWarn, figure,
           "not 'performance': core clocks follow the load, so CPU time and kernel launches "
           "vary between trials (cpupower frequency-set -g performance)"}};
}

}  // namespace

const std::vector<SelfcheckRule>& SelfcheckRules() {
  static const std::vector<SelfcheckRule> rules = {
      {"worker", "ditbench-worker --selfcheck ran and wrote its measurements", JudgeWorker},
      {"timing fidelity", "ditbench's clock against a reference on a GEMM and a tiny forward",
       JudgeTiming},
      {"cuda graphs", "replayed steps against eager steps, and their speed", JudgeGraph},
      {"numerics", "a tiny model's bf16 output against its fp32 output", JudgeNumerics},
      {"clocks", "SM and memory clocks under load against their maxima; throttle reasons",
       JudgeClocks},
      {"gpu mode", "persistence mode, ECC, MIG", JudgeGpuMode},
      {"energy", "NVML's energy counter advances; average power between idle and the limit",
       JudgeEnergy},
      {"matmul", "square matmul TFLOP/s against the device's dense peak", JudgeMatmul},
      {"memory bandwidth", "device memory copy bandwidth", JudgeMemory},
      {"attention", "attention TFLOP/s per SDPA backend", JudgeAttention},
      {"communication", "all-to-all and all-gather bus bandwidth and latency (2+ ranks)",
       JudgeComm},
      {"host load", "other processes on the CPU and the GPUs checked", JudgeHostLoad},
      {"cpu governor", "the CPU frequency governor", JudgeGovernor},
  };
  return rules;
}

std::vector<SelfcheckRow> JudgeSelfcheck(const SelfcheckObservations& observations) {
  std::vector<SelfcheckRow> rows;
  for (const auto& rule : SelfcheckRules()) {
    auto judged = rule.judge(observations);
    rows.insert(rows.end(), judged.begin(), judged.end());
  }
  return rows;
}

}  // namespace ditbench
