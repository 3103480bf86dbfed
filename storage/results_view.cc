#include "storage/results_view.h"

#include <regex>
#include <string_view>

#include <fmt/format.h>

#include "metrics/metric_table.h"

namespace ditbench {
namespace {

// The `results` view; version 1 read profile_blocks from config_json, version 2 from
// policy_json and adds workload and policy (the measurement policy as JSON) at the end.
constexpr const char* kResultsView = R"sql(
-- The public contract (README.md, "The results view"): one row per trial. Columns may be
-- added at the end; the leading ones never change meaning.
CREATE VIEW results AS
SELECT
  c.id AS campaign,
  s.name AS sweep,
  t.trial_key AS trial_key,
  t.status AS status,
  COALESCE(json_extract(t.config_json, '$.model.preset'),
           json_extract(t.config_json, '$.model')) AS model,
  json_extract(t.config_json, '$.resolution') AS resolution,
  json_extract(t.config_json, '$.precision') AS precision,
  json_extract(t.config_json, '$.scope') AS scope,
  json_extract(t.config_json, '$.batch') AS batch,
  json_extract(t.config_json, '$.steps') AS steps,
  json_extract(t.config_json, '$.ulysses') AS ulysses,
  json_extract(t.config_json, '$.ring') AS ring,
  json_extract(t.config_json, '$.pipefusion') AS pipefusion,
  json_extract(t.config_json, '$.cfg') AS cfg,
  json_extract(t.config_json, '$.dp') AS dp,
  t.world_size AS world_size,
  m.latency_ms AS latency_ms,
  m.mean_ms AS mean_ms,
  m.p90_ms AS p90_ms,
  m.std_ms AS std_ms,
  m.cov AS cov,
  m.ci_low_ms AS ci_low_ms,
  m.ci_high_ms AS ci_high_ms,
  m.rank0_ms AS rank0_ms,
  m.skew_ms AS skew_ms,
  m.iterations AS iterations,
  m.warmup AS warmup,
  m.peak_mem_mb AS peak_mem_mb,
  m.tflops AS tflops,
  m.mfu AS mfu,
  t.device AS device,
  c.build AS build,
  t.error AS error,
  m.p99_ms AS p99_ms,
  m.min_ms AS min_ms,
  m.max_ms AS max_ms,
  m.outliers AS outliers,
  m.peak_reserved_mb AS peak_reserved_mb,
  m.images_per_s AS images_per_s,
  m.tokens_per_s AS tokens_per_s,
  c.host AS host,
  strftime('%Y-%m-%dT%H:%M:%SZ', t.started_at{time_modifier}) AS started_at,
  strftime('%Y-%m-%dT%H:%M:%SZ', t.finished_at{time_modifier}) AS finished_at,
  t.run_dir AS run_dir,
  m.throttled AS throttled,
  m.sm_clock_min_mhz AS sm_clock_min_mhz,
  m.sm_clock_max_mhz AS sm_clock_max_mhz,
  json_extract(t.config_json, '$.pipefusion_patches') AS pipefusion_patches,
  json_extract(t.{profile_source}, '$.profile_blocks') AS profile_blocks,
  CASE WHEN json_type(t.config_json, '$.model') = 'object'
       THEN json_extract(t.config_json, '$.model') END AS model_overrides{extra}
FROM trials t
JOIN campaigns c ON c.id = t.campaign_id
JOIN sweeps s ON s.id = c.sweep_id
LEFT JOIN trial_metrics m ON m.trial_id = t.id;
)sql";

}  // namespace

std::string ResultsView(int version) {
  std::string view = kResultsView;
  auto fill = [&view](std::string_view slot, std::string_view text) {
    view.replace(view.find(slot), slot.size(), text);
  };
  fill("{profile_source}", version == 1 ? "config_json" : "policy_json");
  // Times: unix seconds (REAL) before version 10, ISO 8601 text from it on.
  for (int i = 0; i < 2; ++i) fill("{time_modifier}", version < 10 ? ", 'unixepoch'" : "");
  std::string extra;
  if (version >= 2)
    extra += R"sql(,
  json_extract(t.config_json, '$.workload') AS workload,
  t.policy_json AS policy)sql";
  if (version >= 3)
    extra += R"sql(,
  COALESCE(json_extract(t.config_json, '$.pipefusion_warmup_steps'), 1) AS pipefusion_warmup_steps,
  m.comm_mb_per_step AS comm_mb_per_step,
  m.output_error AS output_error,
  m.output_error_note AS output_error_note)sql";
  if (version >= 5)
    extra += R"sql(,
  json_extract(t.health_json, '$.busy') AS busy,
  json_extract(t.health_json, '$.note') AS health_note)sql";
  if (version >= 6)
    extra += R"sql(,
  COALESCE(json_extract(t.config_json, '$.custom'), '{}') AS axes,
  CASE WHEN json_extract(t.config_json, '$.workload') = 'command'
       THEN json_extract(t.config_json, '$.command') END AS command,
  m.extra_json AS metrics)sql";
  if (version >= 7)
    extra += R"sql(,
  json_extract(t.config_json, '$.seed') AS seed,
  t.replicates AS replicates,
  m.launches AS launches,
  m.launch_cov AS launch_cov,
  CASE WHEN m.launches > 1 THEN 'launches' WHEN m.trial_id IS NOT NULL THEN 'iterations'
       END AS ci_scope)sql";
  if (version >= 9)
    extra += R"sql(,
  json_extract(t.placement_json, '$.concurrent_trials') AS concurrent_trials,
  t.placement_json AS placement)sql";
  if (version >= 13)
    extra += R"sql(,
  COALESCE(json_extract(t.config_json, '$.vae_tile'), 0) AS vae_tile,
  COALESCE(json_extract(t.config_json, '$.graph'), 'eager') AS graph)sql";
  if (version >= 14)
    extra += R"sql(,
  CAST(json_extract(t.config_json, '$.resolution') AS INTEGER) AS width,
  CAST(substr(json_extract(t.config_json, '$.resolution'),
              instr(json_extract(t.config_json, '$.resolution'), 'x') + 1) AS INTEGER) AS height,
  json_extract(t.config_json, '$.frames') AS frames)sql";
  if (version >= 15)
    extra += R"sql(,
  m.psnr AS psnr,
  m.ssim AS ssim,
  m.compute_share AS compute_share,
  m.comm_share AS comm_share,
  m.idle_share AS idle_share,
  m.profile_json AS profile)sql";
  if (version >= 16)
    extra += R"sql(,
  m.energy_j AS energy_j,
  m.joules_per_image AS joules_per_image,
  m.energy_note AS energy_note)sql";
  if (version >= 17)
    extra += R"sql(,
  m.quality AS quality,
  CASE WHEN m.quality = 'ok' THEN 1 WHEN m.quality LIKE 'below%' THEN 0 END AS quality_ok)sql";
  if (version >= 20)
    extra += R"sql(,
  CASE WHEN json_extract(t.config_json, '$.workload') = 'command'
       THEN json_extract(t.config_json, '$.custom.attention')
       ELSE COALESCE(json_extract(t.config_json, '$.attention'), 'auto') END AS attention,
  CASE WHEN json_extract(t.config_json, '$.workload') = 'command' THEN NULL
       ELSE COALESCE(json_extract(t.config_json, '$.quant'), 'none') END AS quant,
  json_extract(t.config_json, '$.schedule') AS schedule,
  m.attention_ran AS attention_ran,
  m.steps_json AS step_kernels)sql";
  if (version >= 23)  // before the metric columns, which grow with the metric table
    extra += R"sql(,
  COALESCE(json_extract(t.config_json, '$.tp'), 1) AS tp)sql";
  if (version >= 22)
    for (const std::string& name : MetricColumnsOfView())  // valid SQL identifiers
      extra += fmt::format(
          ",\n  (SELECT v.value FROM metric_values v WHERE v.trial_id = t.id AND v.name = '{0}')"
          " AS {0}",
          name);
  fill("{extra}", extra);
  return view;
}

std::string WithoutMetricColumns(std::string_view view_sql) {
  static const std::regex kMetricColumn(
      ",\n  \\(SELECT v\\.value FROM metric_values v WHERE v\\.trial_id = t\\.id AND "
      "v\\.name = '([A-Za-z_][A-Za-z0-9_]{0,63})'\\) AS \\1");
  return std::regex_replace(std::string(view_sql), kMetricColumn, "");
}

std::vector<std::string> MetricColumnsOfView() {
  std::vector<std::string> names;
  for (const MetricInfo& metric : MetricTable())
    if (!metric.member.is_column()) names.emplace_back(metric.name);
  return names;
}

}  // namespace ditbench
