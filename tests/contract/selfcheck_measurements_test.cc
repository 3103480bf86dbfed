#include "contract/selfcheck_measurements.h"

#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::selfcheck_measurements_test {
namespace {

SelfcheckMeasurements Cpu() {
  SelfcheckMeasurements m;
  m.device = "cpu";
  m.torch = "2.11.0";
  m.threads = 2;
  m.timing = SelfcheckTiming{10, 10.1, 4, 4.4, 0.5, 12};
  m.numerics = SelfcheckNumerics{0.006, 0.0088};
  m.skipped["cuda_graph"] = "no CUDA device";
  return m;
}

TEST(SelfcheckMeasurementsTest, WhatTheWorkerWritesReadsBackTheSame) {
  const SelfcheckMeasurements m = SelfcheckFromJson(SelfcheckJson(Cpu()), "f");
  ASSERT_TRUE(m.timing);
  EXPECT_DOUBLE_EQ(m.timing->forward_reference_ms, 4.4);
  EXPECT_DOUBLE_EQ(m.timing->forward_aa_pct, 12);
  EXPECT_EQ(m.skipped.at("cuda_graph"), "no CUDA device");
  EXPECT_FALSE(m.cuda_graph);
}

// A file written before the A/A noise figures existed reads with them at 0.
TEST(SelfcheckMeasurementsTest, AFileWithoutTheNoiseFiguresReadsThemAsZero) {
  nlohmann::json json = SelfcheckJson(Cpu());
  json["timing"].erase("gemm_aa_pct");
  json["timing"].erase("forward_aa_pct");
  const SelfcheckMeasurements m = SelfcheckFromJson(json, "f");
  EXPECT_DOUBLE_EQ(m.timing->forward_aa_pct, 0);
}

TEST(SelfcheckMeasurementsTest, ABadFigureIsOneLineNamingTheFileAndField) {
  nlohmann::json json = SelfcheckJson(Cpu());
  json["timing"]["forward_ms"] = -1;
  try {
    SelfcheckFromJson(json, "sc.json");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "sc.json: 'timing.forward_ms': expected a finite number >= 0");
  }
  json = SelfcheckJson(Cpu());
  json["version"] = 2;
  EXPECT_THROW(SelfcheckFromJson(json, "sc.json"), std::runtime_error);
}

SelfcheckMeasurements Calibrated() {
  SelfcheckMeasurements m = Cpu();
  SelfcheckCalibration c;
  c.model = "pixart-alpha-tiny";
  c.setup_s = 0.02;
  c.measure_s = 4.5;
  c.build_ms = 1.5;
  c.forward.push_back({"bf16", 384, 1, 2, 2, 73728, 0.62, 12.5});
  m.calibration = c;
  m.launch_wall_s = 0.5;
  return m;
}

TEST(SelfcheckMeasurementsTest, TheCalibrationAndTheLaunchTimeReadBackTheSame) {
  const SelfcheckMeasurements m = SelfcheckFromJson(SelfcheckJson(Calibrated()), "f");
  ASSERT_TRUE(m.calibration);
  EXPECT_EQ(m.calibration->model, "pixart-alpha-tiny");
  EXPECT_DOUBLE_EQ(m.calibration->setup_s, 0.02);
  EXPECT_DOUBLE_EQ(m.calibration->measure_s, 4.5);
  EXPECT_DOUBLE_EQ(m.calibration->build_ms, 1.5);
  ASSERT_EQ(m.calibration->forward.size(), 1u);
  const SelfcheckForwardRate& f = m.calibration->forward[0];
  EXPECT_EQ(f.precision, "bf16");
  EXPECT_EQ(f.image, 384);
  EXPECT_EQ(f.threads, 1);
  EXPECT_EQ(f.ranks, 2);
  EXPECT_EQ(f.ulysses, 2);
  EXPECT_DOUBLE_EQ(f.rank_elements, 73728);
  EXPECT_DOUBLE_EQ(f.gflop, 0.62);
  EXPECT_DOUBLE_EQ(f.ms, 12.5);
  ASSERT_TRUE(m.launch_wall_s);
  EXPECT_DOUBLE_EQ(*m.launch_wall_s, 0.5);
  // The worker's own file has neither a launch time nor, from an older worker, a calibration.
  nlohmann::json json = SelfcheckJson(Cpu());
  EXPECT_FALSE(json.contains("launch_wall_s"));
  EXPECT_FALSE(SelfcheckFromJson(json, "f").calibration);
}

TEST(SelfcheckMeasurementsTest, ABadCalibrationEntryIsRefusedNamingTheField) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json json = SelfcheckJson(Calibrated());
    edit(json);
    try {
      SelfcheckFromJson(json, "sc.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(
      refused([](auto& j) { j["calibration"]["forward"][0]["precision"] = "fp8"; }),
      ::testing::HasSubstr("'calibration.forward[].precision': expected fp32, bf16 or fp16"));
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["threads"] = 0; }),
              ::testing::HasSubstr("'calibration.forward[].threads': expected a whole number"));
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["ranks"] = 0.5; }),
              ::testing::HasSubstr("calibration.forward[].ranks"));
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["ms"] = -3; }),
              ::testing::HasSubstr("'calibration.forward[].ms'"));
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"] = "many"; }),
              ::testing::HasSubstr("'calibration.forward': expected an array of at most 64"));
  EXPECT_THAT(refused([](auto& j) {
                auto entry = j["calibration"]["forward"][0];
                j["calibration"]["forward"] = nlohmann::json::array();
                for (int i = 0; i < 65; ++i) j["calibration"]["forward"].push_back(entry);
              }),
              ::testing::HasSubstr("at most 64"));
  EXPECT_THAT(refused([](auto& j) { j["launch_wall_s"] = "fast"; }),
              ::testing::HasSubstr("'launch_wall_s'"));
}

// A worker (or a file edited by hand) that reports a forward of 1e-300 ms calibrated `plan` to
// estimate hours as a second, and its selfcheck's worker row passed. A figure no device can
// give is refused when the file is read, naming the figure, its value and the bound.
TEST(SelfcheckMeasurementsTest, AFigureNoDeviceCanGiveIsRefusedNamingIt) {
  test::TempDir dir;
  const auto refused = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json json = SelfcheckJson(Calibrated());
    edit(json);
    std::ofstream(dir / "sc.json") << json.dump();
    try {
      ReadSelfcheckMeasurements(dir / "sc.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused([](auto&) {}), "accepted");
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["ms"] = 1e-300; }),
              ::testing::HasSubstr("sc.json: a figure out of its physical bounds: "
                                   "calibration.forward[0].ms 1e-300 ms (expected 0.001 to "
                                   "8.64e+07 ms)"));
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["ms"] = 1e300; }),
              ::testing::HasSubstr("calibration.forward[0].ms 1e+300 ms"));
  // 1e6 GFLOP in 12.5 ms on each of two ranks: 40 PFLOP/s a device.
  EXPECT_THAT(refused([](auto& j) { j["calibration"]["forward"][0]["gflop"] = 1e6; }),
              ::testing::HasSubstr("calibration.forward[0].gflop / ms 40000 TFLOP/s per device"));
  EXPECT_THAT(refused([](auto& j) { j["timing"]["gemm_ms"] = 1e-300; }),
              ::testing::HasSubstr("timing.gemm_ms 1e-300 ms"));
  EXPECT_THAT(refused([](auto& j) { j["launch_wall_s"] = 1e300; }),
              ::testing::HasSubstr("launch_wall_s 1e+300 s"));
  EXPECT_FALSE(ImplausibleSelfcheckFigure(Calibrated()));
}

}  // namespace
}  // namespace ditbench::selfcheck_measurements_test
