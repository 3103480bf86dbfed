#include "contract/selfcheck_measurements.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench {
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

}  // namespace
}  // namespace ditbench
