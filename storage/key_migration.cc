#include "storage/key_migration.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "experiments/trial_identity.h"
#include "storage/statement.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

struct StoredTrial {
  std::int64_t id = 0;
  std::int64_t campaign_id = 0;
  std::string old_key;
  std::string new_key;
  std::string computation_json;
  std::string policy_json;
  bool ok = false;
  std::optional<double> finished_at;
};

// True when `a` is kept in preference to `b` (see the header for the order).
bool Preferred(const StoredTrial& a, const StoredTrial& b) {
  if (a.ok != b.ok) return a.ok;
  if (a.finished_at != b.finished_at) {
    if (!b.finished_at) return true;
    if (!a.finished_at) return false;
    return *a.finished_at > *b.finished_at;
  }
  return a.id > b.id;
}

std::vector<StoredTrial> ReadTrials(sqlite3* db) {
  Statement query(db, "SELECT id, campaign_id, trial_key, config_json, status, finished_at "
                      "FROM trials ORDER BY id");
  std::vector<StoredTrial> trials;
  while (query.Step()) {
    StoredTrial t;
    t.id = query.Int(0);
    t.campaign_id = query.Int(1);
    t.old_key = query.Text(2);
    t.ok = query.Text(4) == "ok";
    t.finished_at = query.OptionalDouble(5);
    TrialConfig config;
    try {
      config = TrialConfigFromJson(ParseBoundedJson(query.Text(3), kMaxStoredJsonDepth, "JSON"));
    } catch (const std::exception& e) {
      throw StorageError(fmt::format(
          "cannot migrate trial {} (key {}) of '{}' to schema 2: its config_json: {}", t.id,
          t.old_key, sqlite3_db_filename(db, "main"), e.what()));
    }
    t.new_key = TrialKey(config);
    t.computation_json = ComputationJson(config).dump();
    t.policy_json = PolicyJson(config).dump();
    trials.push_back(std::move(t));
  }
  return trials;
}

}  // namespace

void RekeyTrialsToV2(sqlite3* db) {
  std::vector<StoredTrial> trials = ReadTrials(db);
  // (campaign, new key) -> index of the trial kept.
  std::map<std::pair<std::int64_t, std::string>, std::size_t> kept;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    auto [it, first] = kept.try_emplace({trials[i].campaign_id, trials[i].new_key}, i);
    if (!first && Preferred(trials[i], trials[it->second])) it->second = i;
  }

  Statement supersede(db, R"sql(
    INSERT INTO superseded_trials (campaign_id, trial_key, kept_trial_id, old_trial_key,
                                   config_json, status, error, finished_at, latency_ms)
    SELECT t.campaign_id, ?, ?, t.trial_key, t.config_json, t.status, t.error, t.finished_at,
           m.latency_ms
    FROM trials t LEFT JOIN trial_metrics m ON m.trial_id = t.id WHERE t.id = ?)sql");
  Statement drop_samples(db, "DELETE FROM samples WHERE trial_id = ?");
  Statement drop_metrics(db, "DELETE FROM trial_metrics WHERE trial_id = ?");
  Statement drop_trial(db, "DELETE FROM trials WHERE id = ?");
  for (const StoredTrial& t : trials) {
    const std::size_t winner = kept.at({t.campaign_id, t.new_key});
    if (trials[winner].id == t.id) continue;
    supersede.Bind(1, t.new_key).Bind(2, trials[winner].id).Bind(3, t.id);
    supersede.Run();
    supersede.Reset();
    for (Statement* drop : {&drop_samples, &drop_metrics, &drop_trial}) {
      drop->Bind(1, t.id);
      drop->Run();
      drop->Reset();
    }
  }

  // Two passes, so that a new key equal to another row's old key never trips UNIQUE.
  Exec(db, "UPDATE trials SET trial_key = 'migrating:' || id");
  Statement rekey(db,
                  "UPDATE trials SET trial_key = ?, config_json = ?, policy_json = ? WHERE id = ?");
  for (const auto& [group, index] : kept) {
    const StoredTrial& t = trials[index];
    rekey.Bind(1, t.new_key).Bind(2, t.computation_json).Bind(3, t.policy_json).Bind(4, t.id);
    rekey.Run();
    rekey.Reset();
  }
}

}  // namespace ditbench
