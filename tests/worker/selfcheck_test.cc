// ditbench-worker --selfcheck on CPU: the figures a CPU can give are written, read back through
// the contract's reader, and every row a CPU cannot give says why. The figures are only checked
// for shape and sign: judging them is `ditbench selfcheck`'s (runner/selfcheck_rules.h), and a
// timed threshold would flake on a shared machine.
#include "worker/selfcheck.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "contract/worker_contract.h"
#include "tests/support/scratch_dir.h"
#include "worker/reference_timer.h"
#include "worker/torch_runtime.h"
#include "worker/worker.h"

namespace ditbench::selfcheck_test {
namespace {

constexpr SelfcheckOptions kQuick{1, 3};  // warm-up, iterations: shape, not precision

TEST(SelfcheckTest, CpuRunWritesEveryCpuFigureAndSaysWhyTheRestIsSkipped) {
  test::ScratchDir dir;
  const auto file = dir / "selfcheck.json";
  ASSERT_EQ(RunSelfcheck(file, kQuick), kWorkerOk);  // one rank: no WORLD_SIZE in the tests
  const SelfcheckMeasurements m = ReadSelfcheckMeasurements(file);
  EXPECT_EQ(m.device, "cpu");
  EXPECT_FALSE(m.torch.empty());
  EXPECT_GT(m.threads, 0);
  EXPECT_TRUE(m.errors.empty()) << m.errors.front();

  ASSERT_TRUE(m.timing);
  EXPECT_GT(m.timing->gemm_ms, 0);
  EXPECT_GT(m.timing->gemm_reference_ms, 0);
  EXPECT_GT(m.timing->forward_ms, 0);
  EXPECT_GT(m.timing->forward_reference_ms, 0);

  ASSERT_TRUE(m.numerics);
  EXPECT_GT(m.numerics->bf16_rel_error, 1e-5) << "the bf16 forward computed in fp32";
  EXPECT_DOUBLE_EQ(m.numerics->bound, kTinyPixArtBf16Bound);

  ASSERT_TRUE(m.throughput);
  EXPECT_EQ(m.throughput->matmul_n, 1024);
  EXPECT_GT(m.throughput->matmul_tflops.at("fp32"), 0);
  EXPECT_GT(m.throughput->matmul_tflops.at("bf16"), 0);
  ASSERT_TRUE(m.throughput->memory_gbps);
  EXPECT_GT(*m.throughput->memory_gbps, 0);
  ASSERT_EQ(m.throughput->attention_tflops.size(), 1u);
  EXPECT_GT(m.throughput->attention_tflops.at("math"), 0);

  // The planner's calibration: every core alone and, on one rank, one thread; three sizes, two
  // precisions, each with the work the planner counts for it.
  ASSERT_TRUE(m.calibration);
  EXPECT_EQ(m.calibration->model, "pixart-alpha-tiny");
  EXPECT_GT(m.calibration->build_ms, 0);
  EXPECT_GT(m.calibration->measure_s, 0);
  EXPECT_GT(m.calibration->setup_s, 0);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(m.calibration->forward.size(), cores > 1 ? 12u : 6u);
  for (const SelfcheckForwardRate& f : m.calibration->forward) {
    EXPECT_TRUE(f.threads == cores || f.threads == 1) << f.threads;
    EXPECT_EQ(f.ranks, 1);
    EXPECT_EQ(f.ulysses, 1);
    EXPECT_GT(f.ms, 0);
    EXPECT_GT(f.gflop, 0);
  }
  EXPECT_LT(m.calibration->forward[0].gflop, m.calibration->forward[2].gflop);  // 192 < 640 px
  EXPECT_LT(m.calibration->forward[0].rank_elements, m.calibration->forward[1].rank_elements);
  EXPECT_FALSE(m.launch_wall_s) << "the coordinator's to add";

  EXPECT_FALSE(m.cuda_graph);
  EXPECT_FALSE(m.comm);
  EXPECT_EQ(m.skipped.at("cuda_graph"), "no CUDA device");
  EXPECT_EQ(m.skipped.at("comm"), "one rank");
  for (const char* backend : {"attention.flash", "attention.efficient", "attention.cudnn"})
    EXPECT_EQ(m.skipped.at(backend), "no CUDA device") << backend;
}

// Two ranks over Gloo, as threads sharing an in-memory store (as the parallel tests run them):
// rank 0 measures the device while rank 1 waits, then both measure the links.
TEST(SelfcheckTest, TwoGlooRanksMeasureTheLinkAndOnlyRankZeroTheDevice) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<SelfcheckMeasurements> results(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      try {
        RankSubgroup world{CreateBackend(store, rank, 2, /*cuda=*/false), rank, 2, nullptr};
        results[rank] = MeasureSelfcheck(torch::kCPU, world, kQuick, store);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& r : ranks) r.join();
  for (int rank = 0; rank < 2; ++rank) {
    const SelfcheckMeasurements& m = results[rank];
    EXPECT_EQ(errors[rank], "") << rank;
    EXPECT_TRUE(m.errors.empty()) << rank << ": " << m.errors.front();
    ASSERT_TRUE(m.comm) << rank;
    EXPECT_EQ(m.comm->world_size, 2);
    EXPECT_GT(m.comm->all_to_all_gbps, 0);
    EXPECT_GT(m.comm->all_gather_gbps, 0);
    EXPECT_GT(m.comm->latency_us, 0);
    EXPECT_FALSE(m.skipped.contains("comm"));
  }
  EXPECT_TRUE(results[0].timing && results[0].throughput && results[0].numerics);
  EXPECT_FALSE(results[1].timing || results[1].throughput || results[1].numerics);
  // Rank 0's calibration: alone with every core, then both ranks together at their share, and
  // the forward split over them by Ulysses.
  ASSERT_TRUE(results[0].calibration);
  EXPECT_FALSE(results[1].calibration);
  int together = 0, split = 0;
  for (const SelfcheckForwardRate& f : results[0].calibration->forward) {
    if (f.ranks == 2 && f.ulysses == 1) ++together;
    if (f.ranks == 2 && f.ulysses == 2) ++split;
    EXPECT_GT(f.ms, 0);
  }
  EXPECT_EQ(together, 6);
  EXPECT_EQ(split, 6);
}

// The reference clock times each iteration on its own: a sleep is never shorter than asked.
TEST(SelfcheckTest, ReferenceClockTimesEveryIterationOfTheWork) {
  int calls = 0;
  const auto ms = ReferenceTimesMs(torch::kCPU, 2, 3, [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  EXPECT_EQ(calls, 5);
  ASSERT_EQ(ms.size(), 3u);
  for (double x : ms) EXPECT_GE(x, 5.0);
}

// On a GPU (skipped elsewhere, as tests/worker/cuda_runtime_test.cc): the CUDA-only figures are
// there, and each SDPA backend is either measured or skipped with the reason it gave.
TEST(SelfcheckCudaTest, GpuRunMeasuresGraphReplayAndEveryBackendOrWhyNot) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const torch::Device cuda(torch::kCUDA, 0);
  const SelfcheckMeasurements m = MeasureSelfcheck(cuda, RankSubgroup{}, kQuick);
  EXPECT_EQ(m.device, "cuda:0");
  EXPECT_TRUE(m.errors.empty()) << m.errors.front();
  ASSERT_TRUE(m.timing && m.cuda_graph && m.numerics && m.throughput);
  EXPECT_GT(m.timing->gemm_reference_ms, 0);
  EXPECT_GT(m.timing->forward_reference_ms, 0);
  EXPECT_GT(m.cuda_graph->graph_ms, 0);
  EXPECT_GT(m.cuda_graph->eager_ms, 0);
  EXPECT_GE(m.cuda_graph->max_abs_diff, 0);
  EXPECT_GT(m.numerics->bf16_rel_error, 1e-5);
  EXPECT_EQ(m.throughput->matmul_n, 8192);
  EXPECT_FALSE(m.skipped.contains("cuda_graph"));
  for (const char* backend : {"math", "flash", "efficient", "cudnn"}) {
    const bool measured = m.throughput->attention_tflops.contains(backend);
    const auto skipped = m.skipped.find(std::string("attention.") + backend);
    EXPECT_NE(measured, skipped != m.skipped.end()) << backend;
    if (skipped != m.skipped.end()) {
      EXPECT_FALSE(skipped->second.empty()) << backend;
    }
  }
  EXPECT_TRUE(m.throughput->attention_tflops.contains("math"));
}

}  // namespace
}  // namespace ditbench::selfcheck_test
