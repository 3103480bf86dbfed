#include "model_zoo/weights/weight_shard.h"

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/families/family_models.h"

namespace ditbench::weight_shard_test {
namespace {

// A fused [q; k; v] weight of 3 parts of 4 rows: rank r of 2 keeps rows 2r, 2r+1 of each part.
TEST(WeightShardTest, AColumnParallelLayerKeepsItsShareOfEachFusedPart) {
  const auto full = torch::arange(12 * 3, torch::kFloat32).view({12, 3});
  const WeightShard qkv{WeightShard::Split::kColumns, {4, 4, 4}};
  const auto rank1 = ShardOf(full, qkv, /*is_bias=*/false, 1, 2);
  ASSERT_EQ(rank1.sizes(), (std::vector<int64_t>{6, 3}));
  for (int part = 0; part < 3; ++part)
    EXPECT_TRUE(torch::equal(rank1.narrow(0, 2 * part, 2), full.narrow(0, 4 * part + 2, 2)));
  // Given as its parts' tensors (a diffusers folder's to_q, to_k, to_v), the same shard.
  EXPECT_TRUE(torch::equal(ShardOfParts(full.split(4, 0), qkv, 1, 2), rank1));
  const auto bias = torch::arange(12, torch::kFloat32);
  EXPECT_TRUE(torch::equal(ShardOf(bias, qkv, /*is_bias=*/true, 0, 2),
                           torch::tensor({0.f, 1.f, 4.f, 5.f, 8.f, 9.f})));
}

// A row-parallel layer keeps its share of the input features; its bias is added once, by the
// group's first rank, so that the all-reduced sum of partial outputs is the whole layer's.
TEST(WeightShardTest, ARowParallelLayerSumsToTheWholeLayer) {
  torch::manual_seed(3);
  const auto weight = torch::randn({5, 8}), bias = torch::randn({5}), x = torch::randn({2, 8});
  const WeightShard out{WeightShard::Split::kRows, {8}};
  torch::Tensor sum = torch::zeros({2, 5});
  for (int rank = 0; rank < 4; ++rank) {
    const auto w = ShardOf(weight, out, false, rank, 4), b = ShardOf(bias, out, true, rank, 4);
    ASSERT_EQ(w.sizes(), (std::vector<int64_t>{5, 2}));
    if (rank > 0) {
      EXPECT_EQ(b.abs().sum().item<float>(), 0.f);
    }
    sum += torch::nn::functional::linear(x.narrow(1, 2 * rank, 2), w, b);
  }
  EXPECT_TRUE(torch::allclose(sum, torch::nn::functional::linear(x, weight, bias), 1e-5, 1e-6));
  EXPECT_THROW(ShardOf(weight, WeightShard{WeightShard::Split::kRows, {6}}, false, 0, 2),
               c10::Error);  // parts that do not sum to the layer
}

// A rank of PixArt's tp group holds the replicated parameters and 1 / tp of every block's
// attention and MLP projections: per block 16 d^2 + 10 d parameters split (q, k, v, the cross
// query and key/value, fc1 with their biases; the three output projections' weights).
TEST(WeightShardTest, APixArtRankKeepsOneTpthOfItsBlocksProjections) {
  const ModelConfig config = *FindModelPreset("pixart-alpha-tiny");
  const int64_t d = config.hidden, split = config.depth * (16 * d * d + 10 * d);
  const auto count = [](torch::nn::Module& m) {
    int64_t n = 0;
    for (const auto& p : m.parameters()) n += p.numel();
    return n;
  };
  torch::manual_seed(0);
  auto whole = MakeDitModel(config);
  const int64_t all = count(whole->module());
  for (int tp : {2, 4}) {
    for (int rank = 0; rank < tp; ++rank) {
      torch::manual_seed(0);
      auto model = MakeDitModel(config);
      TensorShards shards;
      const ShardPlacement placement =
          TensorParallelPlacement(config, RankSubgroup{nullptr, rank, tp, nullptr}, shards);
      ShardParameters(model->module(), placement);
      EXPECT_EQ(count(model->module()), all - split + split / tp) << tp << " " << rank;
      // Its q, k, v are the whole model's rows of this rank's heads.
      const auto qkv = model->module().named_parameters()["blocks.1.qkv.weight"];
      const auto full = whole->module().named_parameters()["blocks.1.qkv.weight"];
      EXPECT_TRUE(torch::equal(qkv.narrow(0, 0, d / tp), full.narrow(0, rank * d / tp, d / tp)));
    }
  }
  // A family without split layers says so (validity refuses it before launch).
  TensorShards none;
  EXPECT_THROW(TensorParallelPlacement(*FindModelPreset("wan2.1-t2v-tiny"),
                                       RankSubgroup{nullptr, 0, 2, nullptr}, none),
               std::invalid_argument);
}

}  // namespace
}  // namespace ditbench::weight_shard_test
