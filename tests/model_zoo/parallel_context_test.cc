// The ParallelContext's attention strategies against one rank, with ranks as threads over Gloo
// and an in-memory store.
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "experiments/worker/torch_runtime.h"
#include "model_zoo/parallel_context.h"

namespace ditbench {
namespace {

// Runs `body(rank, context)` on every rank of `degrees` in its own thread.
void OnEveryRank(const ParallelDegrees& degrees,
                 const std::function<void(int, const ParallelContext&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(degrees.world_size());
  std::vector<std::thread> threads;
  for (int rank = 0; rank < degrees.world_size(); ++rank)
    threads.emplace_back([&, rank] {
      try {
        ParallelContext context(degrees, rank, store, [](const auto& s, int r, int n) {
          return CreateBackend(s, r, n, /*cuda=*/false);
        });
        body(rank, context);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
}

double RelativeL2(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).norm().item<double>() / b.norm().item<double>();
}

TEST(ParallelContextTest, UlyssesJointAttentionEqualsOneRank) {
  torch::manual_seed(3);
  const int64_t b = 2, n = 16, t = 5, h = 4, d = 8;
  Qkv image{torch::randn({b, n, h, d}), torch::randn({b, n, h, d}), torch::randn({b, n, h, d}), {}};
  Qkv text{torch::randn({b, t, h, d}), torch::randn({b, t, h, d}), torch::randn({b, t, h, d}), {}};
  const AttentionOutput reference = ParallelContext().Attend(image, text);
  ASSERT_EQ(reference.text.sizes(), (std::vector<int64_t>{b, t, h, d}));

  const ParallelDegrees ulysses2{1, 1, 1, 1, 2};
  std::vector<AttentionOutput> outputs(2);
  OnEveryRank(ulysses2, [&](int rank, const ParallelContext& context) {
    EXPECT_STREQ(context.attention_name(), "ulysses");
    auto shard = [&](const torch::Tensor& x) { return context.ShardSequence(x, 1); };
    outputs[rank] = context.Attend({shard(image.q), shard(image.k), shard(image.v), {}}, text);
  });
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_LT(RelativeL2(outputs[rank].image, reference.image.narrow(1, rank * n / 2, n / 2)), 1e-5);
    EXPECT_LT(RelativeL2(outputs[rank].text, reference.text), 1e-5);
  }
  // Not vacuous: the text tokens really attended to the image tokens.
  EXPECT_GT(RelativeL2(ParallelContext().Attend(text).image, reference.text), 1e-2);
}

TEST(ParallelContextTest, SequenceShardsGatherBackAndCfgHalvesGatherInOrder) {
  const ParallelDegrees degrees{1, 2, 1, 1, 2};  // cfg 2 x ulysses 2
  auto full = torch::arange(2 * 8).reshape({2, 8}).to(torch::kFloat32);
  std::vector<torch::Tensor> gathered(4), cfg(4);
  OnEveryRank(degrees, [&](int rank, const ParallelContext& context) {
    gathered[rank] = context.GatherSequence(context.ShardSequence(full, 1), 1);
    cfg[rank] = context.GatherCfg(torch::full({1}, double(context.at().cfg)), 0);
  });
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_TRUE(torch::equal(gathered[rank], full)) << rank;
    EXPECT_TRUE(torch::equal(cfg[rank], torch::tensor({0.0f, 1.0f}))) << rank;
  }
}

TEST(ParallelContextTest, PipeFusionWithRingIsRefusedBeforeAnyRendezvous) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  // Would block forever in a rendezvous if it got that far: one rank of four.
  EXPECT_THROW(ParallelContext(ParallelDegrees{1, 1, 2, 2, 1}, 0, store,
                               [](const auto& s, int r, int n) { return CreateBackend(s, r, n, false); }),
               std::invalid_argument);
}

}  // namespace
}  // namespace ditbench
