#include "machine/gpu_discovery.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "machine/gpu_sources.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::gpu_discovery_test {
namespace {

// A source that answers with `gpus`, or fails with `why_not`; counts how often it was asked.
class FakeGpuSource final : public GpuSource {
 public:
  FakeGpuSource(std::string name, std::optional<std::vector<GpuInfo>> gpus, std::string why_not,
                int* asked)
      : name_(std::move(name)), gpus_(std::move(gpus)), why_not_(std::move(why_not)),
        asked_(asked) {}
  std::string Name() const override { return name_; }
  std::optional<std::vector<GpuInfo>> List(std::string* why_not) const override {
    ++*asked_;
    if (!gpus_) *why_not = why_not_;
    return gpus_;
  }

 private:
  std::string name_;
  std::optional<std::vector<GpuInfo>> gpus_;
  std::string why_not_;
  int* asked_;
};

GpuInfo Gpu(int index, const std::string& uuid) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.name = "Fake H100";
  gpu.uuid = uuid;
  gpu.memory_mb = 81559;
  gpu.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  return gpu;
}

class DriverGpuDiscoveryTest : public ::testing::Test {
 protected:
  void Add(const std::string& name, std::optional<std::vector<GpuInfo>> gpus,
           const std::string& why_not = "") {
    sources_.push_back(std::make_unique<FakeGpuSource>(name, std::move(gpus), why_not,
                                                       &asked_[name]));
  }
  DriverGpuDiscovery Discovery() { return DriverGpuDiscovery(std::move(sources_)); }
  std::vector<std::unique_ptr<GpuSource>> sources_;
  std::map<std::string, int> asked_;
};

TEST_F(DriverGpuDiscoveryTest, FirstSourceThatAnswersIsUsedAndTheOnesBeforeItSayWhyNot) {
  Add("nvml", std::nullopt, "libnvidia-ml.so.1 cannot be loaded");
  Add("cuda", std::vector<GpuInfo>{Gpu(0, "GPU-a"), Gpu(1, "GPU-b")});
  Add("nvidia-smi", std::vector<GpuInfo>{Gpu(0, "GPU-wrong")});
  const DriverGpuDiscovery discovery = Discovery();
  const GpuListing listing = discovery.Listing();
  EXPECT_EQ(listing.source, "cuda");
  ASSERT_EQ(listing.gpus.size(), 2u);
  EXPECT_EQ(listing.gpus[1].uuid, "GPU-b");
  EXPECT_EQ(listing.skipped,
            (std::vector<std::string>{"nvml: libnvidia-ml.so.1 cannot be loaded"}));
  EXPECT_EQ(asked_["nvidia-smi"], 0);
  EXPECT_EQ(Describe(listing), "2 GPU(s) from cuda (nvml: libnvidia-ml.so.1 cannot be loaded)");
}

TEST_F(DriverGpuDiscoveryTest, ZeroGpusFromAWorkingSourceIsAnAnswer) {
  Add("nvml", std::vector<GpuInfo>{});
  Add("cuda", std::vector<GpuInfo>{Gpu(0, "GPU-a")});
  const GpuListing listing = Discovery().Listing();
  EXPECT_EQ(listing.source, "nvml");
  EXPECT_TRUE(listing.gpus.empty());
  EXPECT_EQ(asked_["cuda"], 0);
}

TEST_F(DriverGpuDiscoveryTest, NoSourceAnsweringMeansNoGpuWithEveryReason) {
  Add("nvml", std::nullopt, "no nvml");
  Add("cuda", std::nullopt, "no cuda");
  Add("nvidia-smi", std::nullopt, "no nvidia-smi");
  const GpuListing listing = Discovery().Listing();
  EXPECT_EQ(listing.source, "none");
  EXPECT_TRUE(listing.gpus.empty());
  EXPECT_EQ(Describe(listing),
            "no GPU found (nvml: no nvml; cuda: no cuda; nvidia-smi: no nvidia-smi)");
  const nlohmann::json recorded = ToJson(listing);
  EXPECT_EQ(recorded["source"], "none");
  EXPECT_EQ(recorded["skipped"].size(), 3u);
}

TEST_F(DriverGpuDiscoveryTest, DriverIsAskedOnceHoweverOftenTheListIsRead) {
  Add("nvml", std::vector<GpuInfo>{Gpu(0, "GPU-a")});
  const DriverGpuDiscovery discovery = Discovery();
  discovery.ListGpus();
  discovery.ListGpus();
  discovery.Listing();
  EXPECT_EQ(asked_["nvml"], 1);
}

// The real sources, pointed at libraries and programs that are not there: each says so in one
// line naming what it tried, and never throws or crashes.
TEST(GpuSourcesTest, MissingNvmlLibraryFallsBackWithAClearMessage) {
  std::string why;
  EXPECT_FALSE(NvmlGpuSource("libnvidia-ml-not-here.so.1").List(&why).has_value());
  EXPECT_NE(why.find("libnvidia-ml-not-here.so.1 cannot be loaded"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(GpuSourcesTest, MissingCudaLibraryFallsBackWithAClearMessage) {
  std::string why;
  EXPECT_FALSE(CudaDriverGpuSource("libcuda-not-here.so.1").List(&why).has_value());
  EXPECT_NE(why.find("libcuda-not-here.so.1 cannot be loaded"), std::string::npos) << why;
}

TEST(GpuSourcesTest, MissingNvidiaSmiFallsBackWithAClearMessage) {
  std::string why;
  EXPECT_FALSE(NvidiaSmiGpuSource("/nonexistent/nvidia-smi").List(&why).has_value());
  EXPECT_NE(why.find("/nonexistent/nvidia-smi --query-gpu` listed no GPU"), std::string::npos)
      << why;
}

TEST(GpuSourcesTest, LibraryWithoutTheFunctionsIsRefusedByName) {
  std::string why;
  // libm loads but is no NVML.
  EXPECT_FALSE(NvmlGpuSource("libm.so.6").List(&why).has_value());
  EXPECT_NE(why.find("libm.so.6 lacks a function"), std::string::npos) << why;
}

// The CUDA toolkit's stub libcuda (for linking, no driver behind it) loads and has every
// function, but cuInit fails: the source must say so rather than list nothing.
TEST(GpuSourcesTest, CudaStubLibraryIsRecognisedAsNoDriver) {
  const std::filesystem::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  std::string why;
  EXPECT_FALSE(CudaDriverGpuSource(stub.string()).List(&why).has_value());
  EXPECT_NE(why.find("cuInit failed"), std::string::npos) << why;
  EXPECT_NE(why.find("CUDA error 34"), std::string::npos) << why;
}

// nvidia-smi as a script: the query's CSV lines become GPUs, in its order.
TEST(GpuSourcesTest, NvidiaSmiQueryOutputIsParsed) {
  test::TempDir dir;
  const auto program = dir.path() / "nvidia-smi";
  std::ofstream(program) << "#!/bin/sh\n"
                            "echo '0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559, 00000000:18:00.0'\n"
                            "echo '1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559, 00000000:2A:00.0'\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  std::string why;
  const auto gpus = NvidiaSmiGpuSource(program.string()).List(&why);
  ASSERT_TRUE(gpus.has_value()) << why;
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].uuid, "GPU-bbbb");
  EXPECT_EQ((*gpus)[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[1].memory_mb, 81559);
  EXPECT_EQ((*gpus)[1].pci_bus_id, "00000000:2A:00.0");
}

TEST(GpuSourcesTest, NvidiaSmiLinesOfAnotherShapeAreIgnored) {
  EXPECT_FALSE(ParseNvidiaSmiQueryLine("No devices were found").has_value());
  EXPECT_FALSE(ParseNvidiaSmiQueryLine("GPU 0: NVIDIA H100 (UUID: GPU-a)").has_value());
  EXPECT_FALSE(ParseNvidiaSmiQueryLine("x, GPU-a, H100, 1, 0:1:0.0").has_value());
  auto gpu = ParseNvidiaSmiQueryLine("3, GPU-a, H100, [N/A], 00000000:18:00.0");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->memory_mb, 0);  // not known
}

// `run --gpus auto` on a machine where no source answers: the sweep runs on CPU, says why in
// one line, and the campaign records which sources were tried.
TEST(GpuDiscoveryRunTest, NoDriverMeansCpuSlotsAndTheReasonIsPrintedAndRecorded) {
  test::TempDir dir;
  std::ofstream(dir.path() / "sweep.yaml")
      << "name: d\ndefaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, "
         "repeats: 3}\n";
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.push_back(std::make_unique<NvmlGpuSource>("libnvidia-ml-not-here.so.1"));
  sources.push_back(std::make_unique<CudaDriverGpuSource>("libcuda-not-here.so.1"));
  sources.push_back(std::make_unique<NvidiaSmiGpuSource>("/nonexistent/nvidia-smi"));
  DriverGpuDiscovery gpus(std::move(sources));
  test::FakeLauncher launcher;
  test::FakeInterrupt interrupt;
  RunOptions options;
  options.sweep = dir.path() / "sweep.yaml";
  options.db = dir.path() / "results.db";
  options.gpus = "auto";
  options.worker = "/bin/true";
  std::stringstream out, err;
  ASSERT_EQ(RunSweep(options, SweepEffects{launcher, interrupt, gpus}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("GPUs: no GPU found (nvml: libnvidia-ml-not-here.so.1 cannot be "
                           "loaded"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("; ranks run on CPU"), std::string::npos) << out.str();
  auto db = ResultsDb::Open(options.db);
  const nlohmann::json environment = db->reader().Campaigns().back().record.environment;
  EXPECT_EQ(environment["gpu_discovery"]["source"], "none");
  EXPECT_EQ(environment["gpu_discovery"]["skipped"].size(), 3u);
}

}  // namespace
}  // namespace ditbench::gpu_discovery_test
