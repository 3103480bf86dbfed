#include "model_zoo/layers/single_stream_block.h"

#include <gtest/gtest.h>

namespace ditbench::single_stream_block_test {
namespace {

// diffusers runs a single-stream block on cat([text, image]); here the two parts stay apart
// (text replicated under sequence parallelism). With shared weights the split point cannot
// matter: moving tokens from one part to the other leaves every output token unchanged.
TEST(SingleStreamBlockTest, OutputDoesNotDependOnWhereTextEnds) {
  c10::InferenceMode inference;
  torch::manual_seed(3);
  SingleStreamBlock block(64, 2, 4);
  const int64_t b = 2, t = 5, n = 12;
  auto sequence = torch::randn({b, t + n, 64});
  auto temb = torch::randn({b, 64});
  auto ids = torch::randn({t + n, 3}, torch::kFloat64) * 4;
  RotaryTable rotary = MakeRotaryTable(ids, {4, 14, 14}, 10000.0);
  ParallelContext single;
  auto run = [&](int64_t split) {
    auto text = sequence.narrow(1, 0, split).clone();
    auto image = sequence.narrow(1, split, t + n - split).clone();
    block->forward(image, text, temb, rotary.Narrow(split, t + n - split), rotary.Narrow(0, split),
                   single);
    return torch::cat({text, image}, 1);
  };
  auto reference = run(t);
  EXPECT_TRUE(torch::allclose(run(1), reference, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(run(t + 4), reference, 1e-5, 1e-5));
  EXPECT_FALSE(torch::allclose(reference, sequence, 1e-3, 1e-3));  // the block did something
}

}  // namespace
}  // namespace ditbench::single_stream_block_test
