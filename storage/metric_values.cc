#include "storage/metric_values.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "metrics/metric_table.h"
#include "storage/statement.h"

namespace ditbench {

void WriteMetricValues(sqlite3* db, std::int64_t trial_id, const TrialMetrics& m) {
  Statement clear(db, "DELETE FROM metric_values WHERE trial_id = ?");
  clear.Bind(1, trial_id).Run();
  Statement insert(db,
                   "INSERT INTO metric_values (trial_id, name, value, unit, better) "
                   "VALUES (?, ?, ?, ?, ?)");
  for (const auto& [name, value] : m.extra) {
    const auto declared = m.extra_declared.find(name);
    const MetricDeclaration none;
    const MetricDeclaration& d = declared == m.extra_declared.end() ? none : declared->second;
    insert.Bind(1, trial_id).Bind(2, name).Bind(3, value);
    if (d.unit.empty())
      insert.BindNull(4);
    else
      insert.Bind(4, d.unit);
    if (d.better.empty())
      insert.BindNull(5);
    else
      insert.Bind(5, d.better);
    insert.Run();
    insert.Reset();
  }
  Statement note(db, "UPDATE trial_metrics SET extra_note = ? WHERE trial_id = ?");
  if (m.extra_note.empty())
    note.BindNull(1);
  else
    note.Bind(1, m.extra_note);
  note.Bind(2, trial_id).Run();
}

void ReadMetricValues(sqlite3* db, std::vector<ResultRow>& rows) {
  std::map<std::pair<std::int64_t, std::string>, ResultRow*> by_key;
  std::set<std::int64_t> campaigns;
  for (ResultRow& row : rows) {
    by_key[{row.campaign, row.trial_key}] = &row;
    campaigns.insert(row.campaign);
  }
  Statement query(db, R"sql(
    SELECT t.trial_key, v.name, v.value, v.unit, v.better
    FROM metric_values v JOIN trials t ON t.id = v.trial_id
    WHERE t.campaign_id = ? ORDER BY t.trial_key, v.name)sql");
  for (std::int64_t campaign : campaigns) {
    query.Bind(1, campaign);
    while (query.Step()) {
      auto row = by_key.find({campaign, query.Text(0)});
      const std::string name = query.Text(1);
      const double value = query.Double(2);
      if (row == by_key.end() || !IsValidMetricName(name) || !std::isfinite(value)) continue;
      MetricDeclaration declared;
      if (!query.IsNull(3)) declared.unit = query.Text(3);
      if (!query.IsNull(4)) declared.better = query.Text(4);
      row->second->extra_metrics[name] = ExtraMetricOf(name, value, declared);
    }
    query.Reset();
  }
  Statement notes(db, R"sql(
    SELECT t.trial_key, m.extra_note
    FROM trial_metrics m JOIN trials t ON t.id = m.trial_id
    WHERE t.campaign_id = ? AND m.extra_note IS NOT NULL)sql");
  for (std::int64_t campaign : campaigns) {
    notes.Bind(1, campaign);
    while (notes.Step()) {
      auto row = by_key.find({campaign, notes.Text(0)});
      if (row != by_key.end()) row->second->metrics_note = notes.Text(1);
    }
    notes.Reset();
  }
}

}  // namespace ditbench
