// The environment a rank starts with (the torchrun contract of docs/architecture.md, "Worker
// contract"), built from scratch as plain "NAME=value" strings. Boost.Process 1.74's environment
// lookup (`env["NAME"]`) compares past the end of shorter entries (an ASan heap over-read), so the
// launcher never asks Boost to look a variable up: it hands execve this list as it is.
#pragma once

#include <string>
#include <vector>

#include "launch/launcher.h"

namespace ditbench {

// The coordinator's own environment as "NAME=value" strings (a copy of `environ`).
std::vector<std::string> CurrentEnvironment();

// `inherited` minus the variables a rank must not inherit, plus RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR (127.0.0.1), MASTER_PORT, CUDA_VISIBLE_DEVICES (the request's
// devices joined with commas; empty on CPU, so no GPU leaks in), DITBENCH_TRIAL,
// DITBENCH_RESULT and DITBENCH_RANK_CPUS (the rank's cores from request.rank_cpus as a CPU
// list; empty when it is not pinned). With request.python_path set, PYTHONPATH is that folder
// followed by the inherited PYTHONPATH, if any. Entries without '=' are dropped; each name
// appears once. Pure.
// `listen_fd` >= 0: DITBENCH_RENDEZVOUS_FD names it (rank 0 of a worker launch); otherwise the
// variable is left out, an inherited one included.
std::vector<std::string> BuildRankEnvironment(const std::vector<std::string>& inherited,
                                              const LaunchRequest& request, int rank, int port,
                                              int listen_fd = -1);

}  // namespace ditbench
