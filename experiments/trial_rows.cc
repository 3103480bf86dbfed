#include "experiments/trial_rows.h"

namespace ditbench {

bool SharesCfgBatch(const TrialConfig& config, const ModelConfig& model) {
  return model.negative_prompt && config.cfg == 1;
}

int RowsPerReplica(const TrialConfig& config, const ModelConfig& model) {
  return config.batch * (model.negative_prompt ? 2 : 1);
}

int RowsPerForward(const TrialConfig& config, const ModelConfig& model) {
  return RowsPerReplica(config, model) * config.dp;
}

int RowsPerRank(const TrialConfig& config, const ModelConfig& model) {
  return config.batch * (SharesCfgBatch(config, model) ? 2 : 1);
}

}  // namespace ditbench
