// What a Slurm partition offers trials: how many nodes and how many GPUs each, from `sinfo`
// or from the user (--gpus-per-node), so that `run` and `plan` can judge which world sizes
// fit (multi-node trials are allowed only under Slurm).
#pragma once

#include <optional>
#include <string>

namespace ditbench {

struct SlurmPartition {
  int nodes = 0;          // nodes in the partition
  int gpus_per_node = 0;  // GPUs of the smallest node group (0: CPU nodes)
};

// `sinfo -h -o "%D %G"` output: one line per node group, "<node count> <gres>", gres like
// "gpu:8", "gpu:a100:4(S:0-1)", "gpu:4,shard:8" or "(null)". nullopt when no line parses.
std::optional<SlurmPartition> ParseSinfo(const std::string& text);

// Runs sinfo (for `partition`, or the default partition when empty). nullopt with `error`
// set when sinfo cannot be run or says nothing usable.
std::optional<SlurmPartition> QuerySlurmPartition(const std::string& partition,
                                                  std::string* error);

}  // namespace ditbench
