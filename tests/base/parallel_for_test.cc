#include "base/parallel_for.h"

#include <atomic>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace ditbench::parallel_for_test {
namespace {

TEST(ParallelForTest, EveryIndexIsCalledExactlyOnceWhateverTheThreads) {
  for (std::size_t threads : {1u, 2u, 3u, 8u}) {
    for (std::size_t n : {0u, 1u, 2u, 7u, 1000u}) {
      std::vector<std::atomic<int>> calls(n);
      ParallelFor(
          n, [&](std::size_t i) { ++calls[i]; }, threads);
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(calls[i].load(), 1) << "n " << n << ", threads " << threads << ", i " << i;
    }
  }
}

TEST(ParallelForTest, AnExceptionOfAnyShareIsRethrownOnceEveryShareHasEnded) {
  std::atomic<int> calls = 0;
  EXPECT_THROW(ParallelFor(
                   100,
                   [&](std::size_t i) {
                     ++calls;
                     if (i == 99) throw std::runtime_error("the last share failed");
                   },
                   4),
               std::runtime_error);
  EXPECT_EQ(calls.load(), 100);  // the other shares ran to their end
}

}  // namespace
}  // namespace ditbench::parallel_for_test
