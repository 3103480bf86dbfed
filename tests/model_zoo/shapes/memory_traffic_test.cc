// The elements a forward reads and writes beyond its FLOPs, against hand counts of the tiny
// presets (2 blocks, 4 heads, 16 text tokens; 256 px is 256 image tokens).
#include "model_zoo/shapes/memory_traffic.h"

#include <gtest/gtest.h>

namespace ditbench::memory_traffic_test {
namespace {

constexpr ImageShape k256{256, 256, 0};

TEST(MemoryTrafficTest, CrossAttentionScoresTheImageTokensAndTheirTextKeys) {
  const ModelConfig& m = *FindModelPreset("pixart-alpha-tiny");  // 64 wide
  ASSERT_EQ(ImageTokens(m, k256), 256);
  const ForwardElements e = ForwardMemoryElements(m, k256, 1);
  // Per block: self-attention 4 x 256 x 256 scores, cross-attention 4 x 256 x 16.
  EXPECT_EQ(e.scores, 2 * 4 * (256.0 * 256 + 256.0 * 16));
  EXPECT_EQ(e.activations, 2 * 256.0 * 64);
  const ForwardElements two = ForwardMemoryElements(m, k256, 2);
  EXPECT_EQ(two.scores, 2 * e.scores);
  EXPECT_EQ(two.activations, 2 * e.activations);
}

TEST(MemoryTrafficTest, JointAttentionScoresTheJointSequenceAndDualAttentionAddsItsOwn) {
  const ModelConfig& sd3 = *FindModelPreset("sd3-medium-tiny");  // 128 wide
  const ForwardElements e = ForwardMemoryElements(sd3, k256, 1);
  EXPECT_EQ(e.scores, 2 * 4 * 272.0 * 272);  // 256 image + 16 text tokens
  EXPECT_EQ(e.activations, 2 * 272.0 * 128);
  // SD3.5's block 0 attends a second time, over the image tokens only.
  const ModelConfig& sd35 = *FindModelPreset("sd3.5-medium-tiny");
  ASSERT_EQ(sd35.dual_attention_blocks(), 1);
  const ForwardElements dual = ForwardMemoryElements(sd35, k256, 1);
  EXPECT_EQ(dual.scores, e.scores + 4 * 256.0 * 256);
  EXPECT_EQ(dual.activations, e.activations + 256.0 * 128);
}

// What the cost model needs them for: per FLOP, the narrower PixArt with its 16-wide heads
// scores and moves more than SD3 with 32-wide ones, so one price per FLOP cannot fit both.
TEST(MemoryTrafficTest, ANarrowModelWithSmallHeadsHasMoreElementsPerFlop) {
  const ModelConfig& pixart = *FindModelPreset("pixart-alpha-tiny");
  const ModelConfig& sd3 = *FindModelPreset("sd3-medium-tiny");
  const double pixart_flops = ForwardFlops(pixart, k256, 1), sd3_flops = ForwardFlops(sd3, k256, 1);
  EXPECT_GT(ForwardMemoryElements(pixart, k256, 1).scores / pixart_flops,
            ForwardMemoryElements(sd3, k256, 1).scores / sd3_flops);
  EXPECT_GT(ForwardMemoryElements(pixart, k256, 1).activations / pixart_flops,
            1.3 * ForwardMemoryElements(sd3, k256, 1).activations / sd3_flops);
}

}  // namespace
}  // namespace ditbench::memory_traffic_test
