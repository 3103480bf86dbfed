#include "analysis/seed_folding.h"

#include <algorithm>
#include <map>

#include "analysis/configuration_group.h"
#include "stats/stats.h"

namespace ditbench {

std::vector<ResultRow> FoldSeeds(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].measured()) members[ConfigurationOf(rows[i])].push_back(i);
  std::vector<ResultRow> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ResultRow& row = rows[i];
    if (!row.measured()) {
      out.push_back(row);
      continue;
    }
    const std::vector<std::size_t>& same = members.at(ConfigurationOf(row));
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
