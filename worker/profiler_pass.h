// `profile: trace` on a rank: after the timed iterations, a separate, untimed pass of a few
// iterations under LibTorch's Kineto profiler (CPU activities, and CUDA's on a GPU), written as
// this rank's Chrome trace, gzip-compressed, into the run folder. The ranges the analysis reads
// (metrics/trace_profile.h: "ditbench.step N", "ditbench.block N", "ditbench.attention",
// "ditbench.collective <kind>") are user scopes recorded by the model and the parallel layers
// whatever the pass; they cost a thread-local check when no profiler listens.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <torch/torch.h>

namespace ditbench {

inline constexpr int kProfiledIterations = 2;

// Runs `iteration` kProfiledIterations times under the profiler and writes
// <dir>/rank<rank>.trace.json.gz; returns that file name. Throws std::runtime_error when the
// profiler or the file fails (the caller keeps its timed numbers and reports no trace).
std::string ProfileIterations(const std::function<void()>& iteration, torch::Device device,
                              int rank, const std::filesystem::path& dir);

}  // namespace ditbench
