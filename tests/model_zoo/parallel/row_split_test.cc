// The VAE decode split by rows (model_zoo/parallel/row_split.h, `vae_parallel`): each layer's
// split computation equals its computation on the whole activation, and the three decoders
// (AutoencoderKL, AutoencoderKLWan 2.1 and 2.2, AutoencoderKLHunyuanVideo) split over 2 and 4
// ranks (equal and unequal bands), tiled and untiled, equal their one-rank decode (fp32, relative
// L2 <= 1e-5). The ranks are threads over Gloo.
#include "model_zoo/parallel/row_split.h"

#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/model_config.h"
#include "worker/torch_runtime.h"

namespace ditbench::row_split_test {
namespace {

// Runs `body(rank, split)` on `ranks` threads, each with its RowSplit over one Gloo group, and
// returns each rank's error ("" when it returned).
std::vector<std::string> OnRanks(int ranks, const std::function<void(int, const RowSplit&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank] {
      try {
        c10::InferenceMode inference;
        RowSplit split(
            RankSubgroup{CreateBackend(store, rank, ranks, /*cuda=*/false), rank, ranks, nullptr});
        body(rank, split);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

double RelL2(const torch::Tensor& got, const torch::Tensor& want) {
  return ((got - want).norm() / want.norm()).item<double>();
}

TEST(RowSplitTest, LayersOnBandsEqualTheLayersOnTheWholeActivation) {
  c10::InferenceMode inference;
  torch::manual_seed(3);
  torch::nn::Conv2d conv2(torch::nn::Conv2dOptions(4, 5, 3).padding(1));
  torch::nn::Conv3d conv3(torch::nn::Conv3dOptions(4, 5, 3).padding({0, 1, 1}));
  torch::nn::GroupNorm norm(torch::nn::GroupNormOptions(2, 4).eps(1e-6));
  torch::nn::init::normal_(norm->weight);
  torch::nn::init::normal_(norm->bias);
  const auto image = torch::randn({2, 4, 6, 5}), clip = torch::randn({1, 4, 3, 6, 5}) * 3 + 1;
  const auto want2 = conv2(image), want3 = conv3(clip), want_norm = norm(clip);
  const auto want_edge = torch::replication_pad3d(clip, {0, 0, 1, 1, 0, 0});
  for (int ranks : {2, 3, 4}) {  // bands of 3; of 2; of 2, 2, 1, 1
    std::vector<torch::Tensor> got(4 * ranks);
    auto errors = OnRanks(ranks, [&](int rank, const RowSplit& split) {
      const RowSplit rows = split.ForRows(6);
      got[4 * rank] = rows.Gather(rows.Conv(conv2, rows.Shard(image)));
      got[4 * rank + 1] = rows.Gather(rows.Conv(conv3, rows.Shard(clip)));
      got[4 * rank + 2] = rows.Gather(rows.Norm(norm, rows.Shard(clip)));
      // Each band with its replicated-edge halo is its rows of the padded clip.
      got[4 * rank + 3] = rows.WithHalo(rows.Shard(clip), 1, RowSplit::Edge::kReplicate);
    });
    for (int rank = 0; rank < ranks; ++rank) {
      ASSERT_EQ(errors[rank], "") << ranks;
      EXPECT_LT(RelL2(got[4 * rank], want2), 1e-6) << ranks;
      EXPECT_LT(RelL2(got[4 * rank + 1], want3), 1e-6) << ranks;
      EXPECT_LT(RelL2(got[4 * rank + 2], want_norm), 1e-6) << ranks;
      const int64_t band = 6 / ranks + (rank < 6 % ranks ? 1 : 0);
      const int64_t start = rank * (6 / ranks) + std::min(rank, 6 % ranks);
      EXPECT_TRUE(torch::equal(got[4 * rank + 3], want_edge.narrow(3, start, band + 2)))
          << ranks << " rank " << rank;
    }
  }
}

// 7 rows over 4 ranks: bands of 2, 2, 2 and 1; fewer rows than ranks are refused.
TEST(RowSplitTest, UnequalBandsDifferByARowAndFewerRowsThanRanksAreRefused) {
  const auto full = torch::arange(2 * 7 * 3, torch::kFloat32).view({1, 2, 7, 3});
  std::vector<torch::Tensor> bands(4), gathered(4), upsampled(4);
  auto errors = OnRanks(4, [&](int rank, const RowSplit& whole) {
    const RowSplit split = whole.ForRows(7);
    bands[rank] = split.Shard(full);
    gathered[rank] = split.Gather(bands[rank]);
    // After a 2x upsampling every band is twice as tall, and gathers as such.
    upsampled[rank] = split.Gather(bands[rank].repeat_interleave(2, 2));
  });
  for (int rank = 0; rank < 4; ++rank) {
    ASSERT_EQ(errors[rank], "");
    EXPECT_EQ(bands[rank].size(2), rank < 3 ? 2 : 1);
    EXPECT_TRUE(torch::equal(gathered[rank], full));
    EXPECT_TRUE(torch::equal(upsampled[rank], full.repeat_interleave(2, 2)));
  }
  errors = OnRanks(4, [](int, const RowSplit& split) { split.ForRows(3); });
  for (const auto& e : errors)
    EXPECT_NE(e.find("3 latent rows cannot split into 4 bands"), std::string::npos) << e;
}

struct SplitCase {
  const char* model;
  int ranks;
  bool tiled;
};

void PrintTo(const SplitCase& c, std::ostream* os) {
  *os << c.model << " over " << c.ranks << " ranks" << (c.tiled ? ", tiled" : "");
}

class SplitDecodeTest : public ::testing::TestWithParam<SplitCase> {};

// A latent of 8 rows over 2 ranks (equal bands), of 10 over 4 (3, 3, 2, 2) and, tiled, tiles of
// 4 latent rows every 3: tiles that straddle the bands, more tiles than ranks.
TEST_P(SplitDecodeTest, EqualsTheOneRankDecode) {
  const SplitCase& c = GetParam();
  const ModelConfig& config = *FindModelPreset(c.model);
  const bool video = config.vae_kind != VaeKind::kAutoencoderKL;
  const int tile = c.tiled ? 4 * config.vae_downsample : 0;
  std::vector<std::shared_ptr<LatentDecoder>> decoders;
  for (int rank = 0; rank <= c.ranks; ++rank) {  // the last one decodes alone
    torch::manual_seed(11);
    decoders.push_back(MakeLatentDecoder(config));
    DrawSeededWeights(*decoders.back());
    decoders.back()->eval();
  }
  torch::manual_seed(5);
  const int64_t rows = c.ranks == 2 ? 8 : 10;
  const auto latent = video ? torch::randn({1, config.in_channels, 3, rows, 6})
                            : torch::randn({1, config.in_channels, rows, 10});
  torch::Tensor want;
  {
    c10::InferenceMode inference;
    want = decoders.back()->forward(latent, tile);
  }
  std::vector<torch::Tensor> got(c.ranks);
  auto errors = OnRanks(c.ranks, [&](int rank, const RowSplit& split) {
    decoders[rank]->SetRowSplit(split);
    got[rank] = decoders[rank]->forward(latent, tile);
  });
  for (int rank = 0; rank < c.ranks; ++rank) {
    ASSERT_EQ(errors[rank], "") << "rank " << rank;
    ASSERT_EQ(got[rank].sizes(), want.sizes()) << "rank " << rank;
    EXPECT_LE(RelL2(got[rank], want), 1e-5) << "rank " << rank;
  }
}

std::vector<SplitCase> Cases() {
  std::vector<SplitCase> cases;
  for (const char* model :
       {"pixart-alpha-tiny", "wan2.1-t2v-tiny", "wan2.2-ti2v-tiny", "hunyuanvideo-tiny"})
    for (int ranks : {2, 4})
      for (bool tiled : {false, true}) cases.push_back({model, ranks, tiled});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Decoders, SplitDecodeTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           std::string name = info.param.model;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name + "_" + std::to_string(info.param.ranks) + "ranks" +
                                  (info.param.tiled ? "_tiled" : "");
                         });

}  // namespace
}  // namespace ditbench::row_split_test
