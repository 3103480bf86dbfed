// The first host of a Slurm node list (SLURM_JOB_NODELIST), without calling `scontrol show
// hostnames`: a rank started by srun outside ditbench's job script (the worker run by hand
// under srun) finds its MASTER_ADDR with it. Pure; torch-free so that it is unit-tested.
#pragma once

#include <string>
#include <string_view>

namespace ditbench {

// "node[07-08,10],gpu3" -> "node07"; "gpu3,gpu4" -> "gpu3"; "localhost" -> "localhost";
// "" -> "". A bracket that is never closed yields the text before it.
std::string FirstSlurmHost(std::string_view nodelist);

}  // namespace ditbench
