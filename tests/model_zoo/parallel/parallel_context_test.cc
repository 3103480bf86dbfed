// The ParallelContext's attention strategies against one rank, with ranks as threads over Gloo
// and an in-memory store.
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "model_zoo/parallel/parallel_context.h"
#include "worker/torch_runtime.h"

namespace ditbench::parallel_context_test {
namespace {

// Runs `body(rank, context)` on every rank of `degrees` in its own thread.
void OnEveryRank(const ParallelDegrees& degrees,
                 const std::function<void(int, ParallelContext&)>& body) {
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

// PipeFusion under ring: a synchronous step shards the sequence patch-interleaved, so that
// each rank holds (and caches) its chunk of every patch, the same tokens it computes in the
// patch steps; gathering undoes the interleave.
// A dual-attention block (SD3.5-medium) attends twice: under PipeFusion each attention reads
// and writes its own cache. With one shared cache, a patch step's first attention would read
// the other tokens' K/V of the block's second attention.
TEST(ParallelContextTest, EachAttentionOfABlockKeepsItsOwnKvCache) {
  torch::manual_seed(0);
  auto make = [] {
    return Qkv{torch::randn({1, 8, 2, 4}), torch::randn({1, 8, 2, 4}), torch::randn({1, 8, 2, 4}),
               {}};
  };
  const Qkv first = make(), second = make();
  ParallelContext context;  // one rank
  const auto expected_first = context.Attend(first).image;
  const auto expected_second = context.Attend(second).image;
  BlockKvCaches caches;
  context.SetKvCaches(&caches);
  context.Attend(first);  // a synchronous step fills both caches
  context.Attend(second, std::nullopt, /*attention=*/1);
  // A patch step over the second half: its fresh K/V, the first half's from each cache.
  auto half = [](const torch::Tensor& x) { return x.narrow(1, 4, 4); };
  auto half_qkv = [&](const Qkv& x) { return Qkv{half(x.q), half(x.k), half(x.v), {}}; };
  context.SetPatch(ParallelContext::Patch{4, 4, 8});
  const auto out_first = context.Attend(half_qkv(first)).image;
  const auto out_second = context.Attend(half_qkv(second), std::nullopt, /*attention=*/1).image;
  EXPECT_LT(RelativeL2(out_first, half(expected_first)), 1e-6);
  EXPECT_LT(RelativeL2(out_second, half(expected_second)), 1e-6);
  EXPECT_TRUE(torch::equal(caches[0].k, first.k));
  EXPECT_TRUE(torch::equal(caches[1].k, second.k));
}

TEST(ParallelContextTest, PipeFusionLayoutUnderRingGivesEachRankItsChunkOfEveryPatch) {
  const ParallelDegrees degrees{1, 1, 1, 2, 2};  // ring 2 x ulysses 2
  const auto full = torch::arange(16).reshape({1, 16}).to(torch::kFloat32);
  std::vector<torch::Tensor> sync(4), patch1(4), gathered(4);
  OnEveryRank(degrees, [&](int rank, ParallelContext& context) {
    context.SetPatchLayout(2);  // two patches of 8 tokens
    sync[rank] = context.ShardSequence(full, 1);
    gathered[rank] = context.GatherSequence(sync[rank], 1);
    context.SetPatch(ParallelContext::Patch{8, 8, 16});
    patch1[rank] = context.ShardSequence(full, 1);
  });
  for (int s = 0; s < 4; ++s) {
    const float c = 2.0f * s;  // chunks of 2 tokens: rank s takes chunk s of each patch
    EXPECT_TRUE(torch::equal(sync[s], torch::tensor({{c, c + 1, 8 + c, 9 + c}}))) << sync[s];
    EXPECT_TRUE(torch::equal(patch1[s], torch::tensor({{8 + c, 9 + c}}))) << patch1[s];
    EXPECT_TRUE(torch::equal(gathered[s], full)) << gathered[s];
  }
}

// Ring attention's building block: attention over two halves of the keys, merged by their
// log-sum-exps, is attention over all keys; the log-sum-exp is that of the scaled scores. On
// CUDA in bf16 this is cuDNN's entry point (or FlashAttention-2 where cuDNN refuses).
void ExpectPartialsMergeToFullAttention(torch::Device device, torch::ScalarType dtype,
                                        double bound) {
  c10::InferenceMode inference;
  torch::manual_seed(5);
  auto options = torch::TensorOptions().device(device).dtype(dtype);
  const int64_t b = 2, n = 24, h = 4, d = 64;
  auto q = torch::randn({b, n, h, d}, options), k = torch::randn({b, n, h, d}, options);
  auto v = torch::randn({b, n, h, d}, options);
  PartialAttention merged;
  MergePartial(merged, AttentionWithLse(q, k.narrow(1, 0, 10), v.narrow(1, 0, 10)));
  MergePartial(merged, AttentionWithLse(q, k.narrow(1, 10, n - 10), v.narrow(1, 10, n - 10)));
  auto full = Attention(q, k, v).to(torch::kFloat32);
  EXPECT_LT(RelativeL2(merged.out.cpu(), full.cpu()), bound);
  auto scores = torch::einsum("bnhd,bmhd->bhnm", {q.to(torch::kFloat32), k.to(torch::kFloat32)});
  auto lse = torch::logsumexp(scores / std::sqrt(double(d)), -1);  // [B, H, N]
  EXPECT_LT(RelativeL2(AttentionWithLse(q, k, v).lse.cpu(), lse.cpu()), bound);
}

TEST(ParallelContextTest, PartialAttentionsMergeToFullAttention) {
  ExpectPartialsMergeToFullAttention(torch::kCPU, torch::kFloat32, 1e-5);
  ExpectPartialsMergeToFullAttention(torch::kCPU, torch::kBFloat16, 2e-2);
}

// Every kernel the `attention:` axis can force on CPU gives the same attention and log-sum-exp
// as the default to 1e-5 in fp32, merged partials included; forcing a CUDA kernel on CPU
// throws (the trial fails with ATen's reason, never runs another kernel).
TEST(ParallelContextTest, ForcedKernelsAgreeWithTheDefaultOnCpu) {
  c10::InferenceMode inference;
  torch::manual_seed(9);
  const int64_t b = 2, n = 24, h = 4, d = 64;
  auto q = torch::randn({b, n, h, d}), k = torch::randn({b, n, h, d}),
       v = torch::randn({b, n, h, d});
  const auto reference = Attention(q, k, v);
  const auto reference_lse = AttentionWithLse(q, k, v).lse;
  for (const AttentionKernel kernel : {AttentionKernel::kMath, AttentionKernel::kFlash}) {
    ScopedAttentionKernel forced(kernel);
    EXPECT_EQ(CurrentAttentionKernel(), kernel);
    EXPECT_LT(RelativeL2(Attention(q, k, v), reference), 1e-5);
    EXPECT_LT(RelativeL2(AttentionWithLse(q, k, v).lse, reference_lse), 1e-5);
    ExpectPartialsMergeToFullAttention(torch::kCPU, torch::kFloat32, 1e-5);
  }
  EXPECT_EQ(CurrentAttentionKernel(), AttentionKernel::kAuto);
  ScopedAttentionKernel cudnn(AttentionKernel::kCudnn);
  EXPECT_ANY_THROW(Attention(q, k, v));
}

// The kernel that ran is recorded only while a recorder listens: a forced kernel by its name,
// `auto` as SDPA's dispatcher chose it (on CPU: flash for these shapes) and the partial
// attention's own choice (the CPU flash kernel).
TEST(ParallelContextTest, TheKernelThatRanIsRecordedWhileARecorderListens) {
  torch::manual_seed(0);
  auto q = torch::randn({1, 16, 2, 8}), k = torch::randn({1, 16, 2, 8}),
       v = torch::randn({1, 16, 2, 8});
  {
    AttentionKernelRecorder recorder;
    Attention(q, k, v);
    EXPECT_EQ(recorder.ran(), (std::set<std::string>{"flash"}));
    ScopedAttentionKernel math(AttentionKernel::kMath);
    Attention(q, k, v);
    AttentionWithLse(q, k, v);
    EXPECT_EQ(recorder.ran(), (std::set<std::string>{"flash", "math"}));
    {
      AttentionKernelRecorder inner;  // a nested recorder takes the calls until it ends
      Attention(q, k, v);
      EXPECT_EQ(inner.ran(), (std::set<std::string>{"math"}));
    }
  }
  AttentionKernelRecorder after;
  EXPECT_TRUE(after.ran().empty());
}

TEST(ParallelContextTest, PartialAttentionsMergeToFullAttentionOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  ExpectPartialsMergeToFullAttention(torch::kCUDA, torch::kFloat32, 1e-4);
  ExpectPartialsMergeToFullAttention(torch::kCUDA, torch::kBFloat16, 2e-2);
}

}  // namespace
}  // namespace ditbench::parallel_context_test
