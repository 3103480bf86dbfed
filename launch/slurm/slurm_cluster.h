// What a Slurm partition offers trials: how many nodes and how many GPUs each, from `sinfo`
// or from the user (--gpus-per-node), so that `run` and `plan` can judge which world sizes
// fit (multi-node trials are allowed only under Slurm).
#pragma once

#include <functional>
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

// What trials may use under Slurm: `gpus_per_node` and `nodes` where given (> 0), else the
// partition's from sinfo (asked only when one of them is missing; nodes default to 1 when
// sinfo cannot tell). The one rule `run` and `plan` read. nullopt when GPUs per node stay
// unknown, with `reason` set to sinfo's error or "sinfo lists none". `sinfo` asks the cluster
// (tests pass a fake).
using SinfoQuery =
    std::function<std::optional<SlurmPartition>(const std::string& partition, std::string* error)>;
std::optional<SlurmPartition> SlurmCapacity(const std::string& partition, int gpus_per_node,
                                            int nodes, std::string* reason,
                                            const SinfoQuery& sinfo = QuerySlurmPartition);

}  // namespace ditbench
