// How many rows (samples) a trial pushes through the transformer in one forward: defined once,
// for the planner's FLOP, memory and communication estimates and the measured TFLOP/s, MFU and
// tokens/s alike.
//
// Classifier-free guidance: a model that batches a negative prompt
// (ModelConfig::negative_prompt) runs every sample twice, once with the prompt and once with the
// negative one. With cfg=1 both halves share each rank's forward; cfg=2 gives each half its own
// ranks. Data parallelism (dp) replicates the whole rank group.
#pragma once

#include "experiments/trial.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// Whether the positive and negative prompt rows share a forward on one rank: the model
// batches a negative prompt and cfg=1.
bool SharesCfgBatch(const TrialConfig& config, const ModelConfig& model);

// Rows one data-parallel replica's rank group runs per forward: the batch, doubled when the
// model batches a negative prompt (wherever the halves run).
int RowsPerReplica(const TrialConfig& config, const ModelConfig& model);

// Rows the whole trial runs per forward: RowsPerReplica over every data-parallel replica.
int RowsPerForward(const TrialConfig& config, const ModelConfig& model);

// Rows one rank runs per forward: the batch, doubled when the halves share it
// (SharesCfgBatch). For a valid trial this is RowsPerReplica / cfg.
int RowsPerRank(const TrialConfig& config, const ModelConfig& model);

}  // namespace ditbench
