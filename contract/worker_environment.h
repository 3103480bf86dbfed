// The environment between a launcher and each rank of ditbench-worker: the names a launcher
// sets (launch/rank_environment.h on this machine, launch/slurm/slurm_job.h under Slurm) and
// the worker reads (worker/worker_main.cc, worker/worker.cc), besides torch's own RANK,
// LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT. Python code that
// reads them (python/ditbench_result.py, the test fixtures) spells the same names.
#pragma once

namespace ditbench {

// The path of the trial's trial.json (contract/worker_contract.h); --trial overrides it.
inline constexpr const char kTrialFileVariable[] = "DITBENCH_TRIAL";
// The trial's run folder, where each rank writes rank<r>.json; --result-dir overrides it.
inline constexpr const char kResultDirVariable[] = "DITBENCH_RESULT";
// The cores a rank is pinned to, as a CPU list ("2-3,6"; machine/cpu_list.h), or empty when
// it is not pinned: the worker starts one thread per core.
inline constexpr const char kRankCpusVariable[] = "DITBENCH_RANK_CPUS";

// Rank 0 of a local launch of ditbench-worker (LaunchRequest::rendezvous_socket): the number of
// an inherited file descriptor that already listens on 127.0.0.1:MASTER_PORT. Rank 0 serves the
// rendezvous store on it instead of binding the port itself, so no other process can take the
// port between the launcher choosing it and rank 0 listening (the race that a check-then-bind
// port choice has when trials or test suites start side by side).
inline constexpr const char kRendezvousFdVariable[] = "DITBENCH_RENDEZVOUS_FD";

// Under Slurm the coordinator cannot know which ports are free on the first node, so every
// rank derives MASTER_PORT from the job's id (and a step's id) as
// kSlurmRendezvousPortBase + id % kSlurmRendezvousPortSpan: ports 20000 to 39999, below the
// usual ephemeral range.
inline constexpr int kSlurmRendezvousPortBase = 20000;
inline constexpr int kSlurmRendezvousPortSpan = 20000;

}  // namespace ditbench
