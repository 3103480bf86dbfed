// Running one function over an index range on the machine's cores: the planner's per-trial
// keys and verdicts, which depend on the trial alone and are a third of `plan`'s time on a
// sweep of 100,000 trials.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <future>
#include <thread>
#include <vector>

namespace ditbench {

// The threads ParallelFor uses by default: one per core, at most 8.
inline std::size_t DefaultThreads() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
}

// Calls `f(i)` once for every i in [0, n), in contiguous shares of the range on up to `threads`
// threads, the calling thread taking the first share; returns when every call has returned.
// REQUIRES: f may be called concurrently for different i (each call writes only its own
// results). The first exception of the calling thread's share, else of the lowest other share,
// is rethrown once every share has ended.
template <typename F>
void ParallelFor(std::size_t n, const F& f, std::size_t threads = DefaultThreads()) {
  const std::size_t share =
      std::max<std::size_t>(1, (n + threads - 1) / std::max<std::size_t>(1, threads));
  const auto run = [&f](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) f(i);
  };
  std::vector<std::future<void>> others;
  for (std::size_t begin = share; begin < n; begin += share)
    others.push_back(std::async(std::launch::async, run, begin, std::min(n, begin + share)));
  std::exception_ptr failed;
  try {
    run(0, std::min(n, share));
  } catch (...) {
    failed = std::current_exception();
  }
  for (auto& other : others) {
    try {
      other.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace ditbench
