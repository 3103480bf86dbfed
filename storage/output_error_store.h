// OutputErrorStore: where a trial's output error waits for and receives its 1-rank reference
// (runner/output_error.h): the reference's run folder, the trials still waiting for it, and
// their error, image quality and quality verdict once compared.
//
// Made by ResultsDb::Open over its connection and borrowed from it
// (ResultsDb::output_errors()): it must not outlive the ResultsDb. Errors: every method throws
// StorageError. Thread-safety: as ResultsDb.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/result_rows.h"

struct sqlite3;

namespace ditbench {

class OutputErrorStore {
 public:
  OutputErrorStore(const OutputErrorStore&) = delete;
  OutputErrorStore& operator=(const OutputErrorStore&) = delete;

  // The run folder of the newest ok trial of `trial_key` in any campaign.
  std::optional<std::string> NewestOkRunDir(const std::string& trial_key);
  // The ok trials whose reference is `reference_key` and whose error is still unknown.
  std::vector<AwaitingReference> TrialsAwaitingReference(const std::string& reference_key);
  // A trial's error (null, with the reason, when none).
  void SetOutputError(std::int64_t trial_id, std::optional<double> error, const std::string& note);
  // Scope pipeline: the decoded image's PSNR and SSIM against the reference's (null: unknown).
  void SetOutputQuality(std::int64_t trial_id, std::optional<double> psnr,
                        std::optional<double> ssim);
  // The verdict of the trial's quality gates (experiments/quality_gate.h; unset: none).
  void SetQualityVerdict(std::int64_t trial_id, const std::optional<std::string>& verdict);

 private:
  friend class ResultsDb;
  explicit OutputErrorStore(sqlite3* db) : db_(db) {}
  sqlite3* db_;  // ResultsDb's connection, borrowed
};

}  // namespace ditbench
