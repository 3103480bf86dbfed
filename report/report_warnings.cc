#include "report/report_warnings.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "analysis/speedup.h"
#include "report/html_text.h"

namespace ditbench {
namespace {

// Noise warning thresholds (coefficient of variation): a GPU trial is steady, a CPU trial
// shares the machine with everything else.
constexpr double kGpuNoisyCov = 0.05, kCpuNoisyCov = 0.20;

}  // namespace

bool RunsOnGpu(const ResultRow& row) { return !row.device.empty() && row.device != "cpu"; }

std::vector<ReportWarning> ReportWarnings(const std::vector<CampaignInfo>& campaigns,
                                          const std::vector<ResultRow>& rows) {
  std::vector<ReportWarning> warnings;
  std::set<std::string> builds, devices;
  for (const CampaignInfo& c : campaigns) {
    builds.insert(c.record.build);
    if (!c.finished_at) {
      warnings.push_back({fmt::format("Campaign {} has not finished: its results may be partial.",
                                      c.id), {}});
    }
  }
  if (builds.size() > 1) {
    warnings.push_back({fmt::format(
        "The campaigns come from {} different builds ({}): compare rows of one campaign, or "
        "use --baseline.", builds.size(), fmt::join(builds, ", ")), {}});
  }
  std::vector<std::string> noisy_gpu, noisy_cpu, throttled, busy, packed, no_energy;
  for (const ResultRow& row : rows) {
    if (!row.measured()) continue;
    devices.insert(row.device);
    const std::string name = fmt::format("{} (campaign {}, {}, CoV {:.1f}%)", row.trial_key,
                                         row.campaign, TrialLabel(row), row.cov.value_or(0) * 100);
    if (row.cov && RunsOnGpu(row) && *row.cov > kGpuNoisyCov) noisy_gpu.push_back(name);
    if (row.cov && !RunsOnGpu(row) && *row.cov > kCpuNoisyCov) noisy_cpu.push_back(name);
    if (row.throttled) throttled.push_back(name);
    if (!row.energy_note.empty())
      no_energy.push_back(fmt::format("{} (campaign {}, {}): {}", row.trial_key, row.campaign,
                                      TrialLabel(row), row.energy_note));
    if (row.concurrent_trials > 0)
      packed.push_back(fmt::format("{} (campaign {}, {}): beside {} other trial(s)", row.trial_key,
                                   row.campaign, TrialLabel(row), row.concurrent_trials));
    if (row.busy) {
      busy.push_back(fmt::format("{} (campaign {}, {}): {}", row.trial_key, row.campaign,
                                 TrialLabel(row), row.health_note.empty() ? "busy" : row.health_note));
    }
  }
  if (!packed.empty()) {
    warnings.push_back({fmt::format(
        "{} trial(s) ran packed beside other trials (--policy pack): they shared the host's "
        "CPU, memory bandwidth and PCIe. Compare them with each other, or list the exclusive "
        "ones with `ditbench query --where concurrent_trials=0`.", packed.size()), packed});
  }
  if (!busy.empty()) {
    warnings.push_back({fmt::format(
        "{} trial(s) were measured while other work ran on the machine: their latencies (and "
        "every speedup computed from them) are suspect. Rerun them on an idle machine "
        "(`ditbench run SWEEP --rerun busy --require-idle 600`: only these trials run "
        "again).", busy.size()), busy});
  }
  if (!throttled.empty()) {
    warnings.push_back({fmt::format(
        "{} trial(s) ran while the GPU throttled (power, thermal or hardware slowdown); their "
        "latencies understate the hardware.", throttled.size()), throttled});
  }
  if (!no_energy.empty()) {
    warnings.push_back({fmt::format(
        "{} GPU trial(s) have no energy per image: a rank could not read its GPU's energy "
        "counter (NVML), each for the reason listed.", no_energy.size()), no_energy});
  }
  if (devices.size() > 1) {
    warnings.push_back(
        {fmt::format("Trials ran on different devices ({}).", fmt::join(devices, ", ")), {}});
  }
  if (!noisy_gpu.empty()) {
    warnings.push_back({fmt::format("{} GPU trial(s) are noisy (coefficient of variation above "
                                    "{:.0f}%, the GPU threshold).", noisy_gpu.size(),
                                    kGpuNoisyCov * 100), noisy_gpu});
  }
  if (!noisy_cpu.empty()) {
    warnings.push_back({fmt::format("{} CPU trial(s) are noisy (coefficient of variation above "
                                    "{:.0f}%, the CPU threshold).", noisy_cpu.size(),
                                    kCpuNoisyCov * 100), noisy_cpu});
  }
  // A speedup above the world size is almost never real: a slowed baseline (a busy machine,
  // a cold first trial) or different work. Say so rather than print it as a win.
  std::map<ReportGroup, std::vector<ResultRow>> groups;
  for (const ResultRow& row : rows) groups[ReportGroupOf(row)].push_back(row);
  std::vector<std::string> superlinear;
  for (const auto& [key, group] : groups) {
    const OneRankBaselines baselines(group);
    for (const ResultRow& row : group) {
      if (row.world_size <= 1) continue;
      const std::optional<Speedup> speedup = SpeedupOf(baselines, row);
      if (speedup && speedup->trust.Has(Doubt::kSuperlinear))
        superlinear.push_back(fmt::format(
            "{} (campaign {}, {}: {:.2f}x on {} ranks against {}{})", row.trial_key, row.campaign,
            TrialLabel(row), speedup->value, row.world_size, speedup->baseline_key,
            speedup->trust.Has(Doubt::kBaselineBusy) ? ", measured on a busy machine" : ""));
    }
  }
  if (!superlinear.empty()) {
    warnings.push_back({fmt::format(
        "{} trial(s) are faster than their 1-rank baseline by more than their world size: "
        "suspicious. The likely cause is a slowed baseline (a busy machine, a noisy or cold "
        "first trial); check its CoV and machine health, and rerun it.", superlinear.size()),
        superlinear});
  }
  return warnings;
}

std::string RenderWarnings(const std::vector<ReportWarning>& warnings) {
  if (warnings.empty()) return "";
  std::string html = "<h2 id=\"warnings\">Warnings</h2>\n";
  for (const ReportWarning& w : warnings) {
    html += "<div class=\"warning\">" + HtmlEscape(w.text);
    if (!w.trials.empty()) {
      html += fmt::format("<details><summary>{} trial(s)</summary><ul>", w.trials.size());
      for (const std::string& t : w.trials) html += "<li>" + HtmlEscape(t) + "</li>";
      html += "</ul></details>";
    }
    html += "</div>\n";
  }
  return html;
}

}  // namespace ditbench
