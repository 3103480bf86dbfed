#include "report/seed_folding.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "report/comparison.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

// Everything that identifies a configuration within a report group, but the seed.
auto FoldKey(const ResultRow& r) {
  return std::make_tuple(r.campaign, ModelIdentity(r), r.resolution, r.precision, r.scope,
                         r.batch, r.steps, r.profile_blocks, r.ulysses, r.ring, r.pipefusion,
                         r.pipefusion_patches, r.pipefusion_warmup_steps, r.cfg, r.dp,
                         r.device, r.workload, r.axes);
}

}  // namespace

std::string ConfigurationId(const ResultRow& row) {
  std::string id;
  std::apply([&id](const auto&... field) { ((id += fmt::format("{}|", field)), ...); },
             FoldKey(row));
  return id;
}

std::vector<ResultRow> FoldSeeds(const std::vector<ResultRow>& rows) {
  using Key = decltype(FoldKey(rows.front()));
  std::map<Key, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].measured()) members[FoldKey(rows[i])].push_back(i);
  std::vector<ResultRow> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ResultRow& row = rows[i];
    if (!row.measured()) {
      out.push_back(row);
      continue;
    }
    const std::vector<std::size_t>& same = members.at(FoldKey(row));
    if (same.size() < 2) {
      out.push_back(row);
      continue;
    }
    if (same.front() != i) continue;  // folded into the first member's row
    std::vector<double> medians;
    std::int64_t iterations = 0;
    for (std::size_t j : same) {
      medians.push_back(*rows[j].latency_ms);
      iterations += rows[j].iterations.value_or(0);
    }
    std::sort(medians.begin(), medians.end());
    ResultRow folded = row;
    folded.folded = static_cast<std::int64_t>(same.size());
    folded.latency_ms = Quantile(medians, 0.5);
    folded.folded_min_ms = folded.ci_low_ms = medians.front();
    folded.folded_max_ms = folded.ci_high_ms = medians.back();
    folded.cov = Summarize(medians).cov;
    folded.iterations = iterations;
    // Throughput scales with the folded latency.
    if (folded.tflops && row.latency_ms && *folded.latency_ms > 0)
      folded.tflops = *row.tflops * *row.latency_ms / *folded.latency_ms;
    if (folded.mfu && row.latency_ms && *folded.latency_ms > 0)
      folded.mfu = *row.mfu * *row.latency_ms / *folded.latency_ms;
    out.push_back(std::move(folded));
  }
  return out;
}

}  // namespace ditbench
