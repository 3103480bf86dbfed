#include "experiments/quality_gate.h"

#include <limits>

#include <gtest/gtest.h>

namespace ditbench::quality_gate_test {
namespace {

QualityGate Gate(std::optional<double> error, std::optional<double> psnr,
                 std::optional<double> ssim = std::nullopt) {
  QualityGate gate;
  gate.max_output_error = error;
  gate.min_psnr = psnr;
  gate.min_ssim = ssim;
  return gate;
}

TEST(QualityGateTest, ATrialThatPassesEveryGateIsOk) {
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35), true, {1e-4, 40.0, 0.99}), "ok");
  // An image equal to the reference's has an infinite PSNR: it passes any minimum.
  EXPECT_EQ(QualityVerdict(Gate(std::nullopt, 35), true,
                           {0.0, std::numeric_limits<double>::infinity(), 1.0}),
            "ok");
}

TEST(QualityGateTest, AMissedGateSaysWhichWithItsNumbers) {
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35), true, {1e-4, 30.14, 0.9}), "below: psnr 30.1 < 35");
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35, 0.95), true, {0.0021, 30.14, 0.9}),
            "below: output error 0.0021 > 0.001, psnr 30.1 < 35, ssim 0.9 < 0.95");
  EXPECT_TRUE(IsBelowQuality(*QualityVerdict(Gate(1e-3, 35), true, {0.01, 50.0, 1.0})));
  EXPECT_FALSE(IsBelowQuality("ok"));
  EXPECT_EQ(MissedGates("below: psnr 30.1 < 35"), "psnr 30.1 < 35");
}

TEST(QualityGateTest, NoVerdictUntilTheNumbersAGateNeedsAreKnown) {
  // The reference has not finished: no output error, no PSNR yet.
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35), true, {}), std::nullopt);
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35), true, {1e-4, std::nullopt, std::nullopt}), std::nullopt);
  EXPECT_EQ(QualityVerdict(QualityGate{}, true, {1e-4, 40.0, 1.0}), std::nullopt);
}

TEST(QualityGateTest, PsnrAndSsimGatesApplyToDecodedImagesOnly) {
  // Scope denoise: a latent has no PSNR; only the output-error gate applies.
  EXPECT_EQ(QualityVerdict(Gate(std::nullopt, 35), false, {0.5, std::nullopt, std::nullopt}),
            std::nullopt);
  EXPECT_EQ(QualityVerdict(Gate(1e-3, 35), false, {0.5, std::nullopt, std::nullopt}),
            "below: output error 0.5 > 0.001");
}

TEST(QualityGateTest, GatesReadBackFromTheirJsonAndRefuseOutOfRangeValues) {
  const QualityGate gate = Gate(1e-3, 35, 0.9);
  QualityGate read;
  std::string expected;
  ASSERT_TRUE(QualityGateFromJson(QualityGateJson(gate), &read, &expected));
  EXPECT_EQ(read, gate);
  for (const char* bad : {R"({"min_psnr": 0})", R"({"min_ssim": 1.01})", R"({"max_error": 1})",
                          R"({"max_output_error": true})", R"([1])"}) {
    EXPECT_FALSE(QualityGateFromJson(nlohmann::json::parse(bad), &read, &expected)) << bad;
    EXPECT_FALSE(expected.empty());
  }
}

// A PSNR gate above the restart band (the least PSNR a server restart alone gives) cannot be
// told from a restart: neither ok nor below. Within the band, the gates judge as ever.
TEST(QualityGateTest, APsnrGateAboveTheRestartBandIsUnresolved) {
  EXPECT_EQ(QualityVerdict(Gate(std::nullopt, 45), true, {0.01, 38.0, 0.99}, 41.2),
            "unresolved: min_psnr 45 > restart band 41.2 dB");
  EXPECT_FALSE(IsBelowQuality("unresolved: min_psnr 45 > restart band 41.2 dB"));
  EXPECT_EQ(QualityVerdict(Gate(std::nullopt, 35), true, {0.01, 38.0, 0.99}, 41.2), "ok");
  EXPECT_EQ(QualityVerdict(Gate(std::nullopt, 35), true, {0.01, 30.0, 0.99}, 41.2),
            "below: psnr 30 < 35");
}

TEST(QualityGateTest, RestartsIsAnIntegerFromOneToTwentyAndNoGate) {
  QualityGate gate;
  std::string expected;
  EXPECT_TRUE(SetQualityGate(gate, "restarts", 3, &expected));
  EXPECT_EQ(gate.restarts, 3);
  EXPECT_TRUE(gate.empty());
  EXPECT_EQ(QualityGateJson(gate), (nlohmann::json{{"restarts", 3}}));
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(21), nlohmann::json(2.5)}) {
    EXPECT_FALSE(SetQualityGate(gate, "restarts", bad, &expected)) << bad;
    EXPECT_NE(expected.find("an integer from 1 to 20"), std::string::npos) << expected;
  }
}

}  // namespace
}  // namespace ditbench::quality_gate_test
