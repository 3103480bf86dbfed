// OutputErrorStore (output_error_store.h): output errors and their 1-rank references.
#include "storage/output_error_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "storage/statement.h"

namespace ditbench {

std::optional<std::string> OutputErrorStore::NewestOkRunDir(const std::string& trial_key) {
  Statement query(db_,
                  "SELECT run_dir FROM results WHERE trial_key = ? AND status = 'ok' "
                  "AND run_dir IS NOT NULL ORDER BY campaign DESC LIMIT 1");
  query.Bind(1, trial_key);
  if (!query.Step()) return std::nullopt;
  return query.Text(0);
}

std::vector<AwaitingReference> OutputErrorStore::TrialsAwaitingReference(
    const std::string& reference_key) {
  Statement query(db_, R"sql(
    SELECT t.id, t.run_dir, json_extract(t.policy_json, '$.quality'),
           (SELECT v.value FROM metric_values v WHERE v.trial_id = t.id
            AND v.name = 'restart_psnr')
    FROM trials t JOIN trial_metrics m ON m.trial_id = t.id
    WHERE t.status = 'ok' AND m.output_error IS NULL AND m.output_reference_key = ?
    ORDER BY t.id)sql");
  query.Bind(1, reference_key);
  std::vector<AwaitingReference> trials;
  while (query.Step()) {
    AwaitingReference trial{query.Int(0), query.Text(1), {}, std::nullopt};
    if (!query.IsNull(2)) {
      std::string expected;
      const auto gate = ParseStoredJson(query.Text(2));
      if (!QualityGateFromJson(gate, &trial.quality, &expected))
        throw StorageError(fmt::format("trial {}: its stored quality gate: expected {}",
                                       trial.trial_id, expected));
    }
    if (!query.IsNull(3)) trial.restart_psnr = query.Double(3);
    trials.push_back(std::move(trial));
  }
  return trials;
}

void OutputErrorStore::SetOutputError(std::int64_t trial_id, std::optional<double> error,
                                      const std::string& note) {
  Statement update(db_,
                   "UPDATE trial_metrics SET output_error = ?, output_error_note = ? "
                   "WHERE trial_id = ?");
  update.Bind(1, error).Bind(2, note).Bind(3, trial_id);
  update.Run();
}

void OutputErrorStore::SetOutputQuality(std::int64_t trial_id, std::optional<double> psnr,
                                        std::optional<double> ssim) {
  Statement update(db_, "UPDATE trial_metrics SET psnr = ?, ssim = ? WHERE trial_id = ?");
  update.Bind(1, psnr).Bind(2, ssim).Bind(3, trial_id);
  update.Run();
}

void OutputErrorStore::SetQualityVerdict(std::int64_t trial_id,
                                         const std::optional<std::string>& verdict) {
  Statement update(db_, "UPDATE trial_metrics SET quality = ? WHERE trial_id = ?");
  if (verdict)
    update.Bind(1, *verdict);
  else
    update.BindNull(1);
  update.Bind(2, trial_id).Run();
}

}  // namespace ditbench
