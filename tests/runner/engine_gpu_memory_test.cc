// An engine trial's GPU memory (runner/engine_gpu_memory.h): NVML read through its dlopen path
// (a stand-in library, tests/fixtures/fake_nvml.cc, since this machine has no GPU), the dirty
// GPU refused before the server starts, and the memory at rest and at peak.
#include "runner/engine_gpu_memory.h"

#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace ditbench::engine_gpu_memory_test {
namespace {

// FAKE_NVML_USED_MB for the stand-in library, restored after the test.
class FakeNvmlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("FAKE_NVML_USED_MB");
    ::unsetenv("FAKE_NVML_INIT_FAILS");
  }
  std::unique_ptr<GpuMemoryReader> Open(const std::vector<std::string>& gpus, std::string* why) {
    return OpenNvmlMemoryReader(gpus, why, DITBENCH_FAKE_NVML);
  }
};

TEST_F(FakeNvmlTest, GpusAreNamedByIndexOrUuidPrefixAndReadInThatOrder) {
  ::setenv("FAKE_NVML_USED_MB", "100,5000", 1);
  std::string why;
  const auto reader = Open({"GPU-bbbb", "0"}, &why);
  ASSERT_TRUE(reader) << why;
  const auto used = reader->UsedMb(&why);
  ASSERT_TRUE(used) << why;
  EXPECT_EQ(*used, (std::vector<double>{5000, 100}));
  ::setenv("FAKE_NVML_USED_MB", "300,5000", 1);  // read again at every call
  EXPECT_EQ(reader->UsedMb(&why)->at(1), 300);
}

TEST_F(FakeNvmlTest, AGpuNamedTwiceOrNotAtAllAndAFailingNvmlAreSaidInOneLine) {
  ::setenv("FAKE_NVML_USED_MB", "100,5000", 1);
  std::string why;
  EXPECT_FALSE(Open({"7"}, &why));
  EXPECT_EQ(why, "NVML has 2 GPU(s); '7' names none of them");
  EXPECT_FALSE(Open({"GPU-"}, &why));
  EXPECT_EQ(why, "NVML has 2 GPU(s); 'GPU-' names more than one of them");
  ::setenv("FAKE_NVML_INIT_FAILS", "1", 1);
  EXPECT_FALSE(Open({"0"}, &why));
  EXPECT_EQ(why, "nvmlInit failed: Driver Not Loaded (NVML error 9)");
  EXPECT_FALSE(OpenNvmlMemoryReader({"0"}, &why, "libnvidia-ml-not-here.so.1"));
  EXPECT_NE(why.find("libnvidia-ml-not-here.so.1 cannot be loaded"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

// A reader that gives its readings in turn, the last one again once they run out.
class ScriptedReader final : public GpuMemoryReader {
 public:
  explicit ScriptedReader(std::deque<std::vector<double>> readings)
      : readings_(std::move(readings)) {}
  std::optional<std::vector<double>> UsedMb(std::string*) override {
    std::lock_guard lock(mutex_);
    ++asked_;
    std::vector<double> now = readings_.front();
    if (readings_.size() > 1) readings_.pop_front();
    return now;
  }
  const std::vector<std::string>& Gpus() const override { return gpus_; }
  int asked() const {
    std::lock_guard lock(mutex_);
    return asked_;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<std::vector<double>> readings_;
  std::vector<std::string> gpus_{"0", "1"};
  int asked_ = 0;
};

TEST(EngineGpuMemoryTest, AGpuHoldingMoreThanTheThresholdIsRefusedBeforeTheServerStarts) {
  EngineGpuMemory memory(
      std::make_unique<ScriptedReader>(std::deque<std::vector<double>>{{500, 20480}}), "", 4096);
  try {
    memory.CheckClean();
    FAIL() << "a GPU holding 20480 MiB is not clean";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 1 holds 20480 MiB before the server starts, more "
                                         "than engine.dirty_gpu_mb 4096"),
              std::string::npos)
        << e.what();
  }
  EngineGpuMemory clean(
      std::make_unique<ScriptedReader>(std::deque<std::vector<double>>{{500, 300}}), "", 4096);
  EXPECT_NO_THROW(clean.CheckClean());
}

TEST(EngineGpuMemoryTest, RestIsTheReadingOnceReadyAndPeakTheMostOfEverySample) {
  auto owned = std::make_unique<ScriptedReader>(std::deque<std::vector<double>>{
      {400, 300}, {9000, 8000}, {12000, 7000}, {11000, 15000}, {9500, 8000}});
  ScriptedReader* reader = owned.get();
  EngineGpuMemory memory(std::move(owned), "", 4096);
  memory.CheckClean();                                   // reading 1: before the server
  memory.StartSampling();                                // reading 2: at rest, then every sample
  for (int i = 0; i < 2000 && reader->asked() < 6; ++i)  // bounded by count, not by time
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  memory.StopSampling();
  ASSERT_GE(reader->asked(), 6);
  RankResult result;
  memory.Record(result);
  EXPECT_EQ(result.metrics.at("server_gpu_mem_rest_mb"), 9000);
  EXPECT_EQ(result.metrics.at("server_gpu_mem_peak_mb"), 15000);
  const nlohmann::json& said = result.environment.at("engine_gpu_memory");
  EXPECT_EQ(said["before_mb"], nlohmann::json({400, 300}));
  EXPECT_EQ(said["peak_mb"], nlohmann::json({12000, 15000}));
  EXPECT_EQ(said["source"], "nvml");
}

TEST(EngineGpuMemoryTest, ACpuTrialMeasuresNothingAndSaysWhy) {
  TrialFile trial;
  trial.device = "cpu";
  const auto memory = WatchEngineGpuMemory(trial);
  memory->CheckClean();
  memory->StartSampling();
  memory->StopSampling();
  RankResult result;
  memory->Record(result);
  EXPECT_EQ(result.environment.at("engine_gpu_memory"), "not measured: a CPU trial");
  EXPECT_FALSE(result.metrics.contains("server_gpu_mem_peak_mb"));
}

}  // namespace
}  // namespace ditbench::engine_gpu_memory_test
