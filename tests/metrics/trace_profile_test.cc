#include "metrics/trace_profile.h"

#include <fstream>

#include <gtest/gtest.h>
#include <zlib.h>

#include "base/untrusted_input.h"
#include "tests/support/temp_dir.h"

namespace ditbench::trace_profile_test {
namespace {

using Json = nlohmann::json;

// A complete event as Kineto writes one: microseconds, pid and tid.
Json Event(const std::string& cat, const std::string& name, double ts, double dur, int tid = 1) {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 0}, {"tid", tid},
          {"ts", ts},  {"dur", dur}, {"args", Json::object()}};
}

std::string Trace(const std::vector<Json>& events) {
  Json trace = {{"schemaVersion", 1}, {"traceEvents", events}};
  // Kineto also writes metadata and flow events: they are not complete events.
  trace["traceEvents"].push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 0}});
  trace["traceEvents"].push_back({{"ph", "f"}, {"name", "ac2g"}, {"id", 3}, {"ts", 1}});
  return trace.dump();
}

// One step on the device timeline, in microseconds:
//   window [1000, 2000)  (its host range [900, 1500) is ignored: device copies win)
//   compute kernels [1000, 1300) and [1200, 1400) on stream 7, a memcpy [1700, 1750)
//   an NCCL kernel [1350, 1600) on stream 20; a kernel after the step [2500, 2600)
// compute |[1000,1400) u [1700,1750)| = 450, comm 250, overlap [1350,1400) = 50,
// busy [1000,1600) u [1700,1750) = 650, idle 350.
std::vector<Json> DeviceStep() {
  return {Event("user_annotation", "ditbench.step 0", 900, 600),
          Event("gpu_user_annotation", "ditbench.step 0", 1000, 1000, 7),
          Event("gpu_user_annotation", "ditbench.attention", 1100, 200, 7),
          Event("kernel", "sm90_xmma_gemm_bf16", 1000, 300, 7),
          Event("kernel", "flash_fwd_kernel", 1200, 200, 7),
          Event("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 1700, 50, 7),
          Event("kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 1350,
                250, 20),
          Event("kernel", "sm90_xmma_gemm_bf16", 2500, 100, 7),
          Event("cpu_op", "aten::mm", 950, 30)};
}

TEST(TraceProfileTest, DeviceTimelineSplitsAStepIntoComputeCommunicationAndIdle) {
  const TraceProfile p = AnalyzeTrace(Trace(DeviceStep()), "t.json");
  EXPECT_EQ(p.timeline, "device");
  ASSERT_EQ(p.steps.size(), 1u);
  const StepProfile& s = p.steps[0];
  EXPECT_EQ(s.step, 0);
  EXPECT_EQ(s.occurrences, 1);
  EXPECT_DOUBLE_EQ(s.step_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.compute_ms, 0.45);
  EXPECT_DOUBLE_EQ(s.comm_ms, 0.25);
  EXPECT_DOUBLE_EQ(s.overlap_ms, 0.05);
  EXPECT_DOUBLE_EQ(s.exposed_comm_ms, 0.2);
  EXPECT_DOUBLE_EQ(s.idle_ms, 0.35);
  EXPECT_DOUBLE_EQ(s.attention_ms, 0.2);
  EXPECT_DOUBLE_EQ(p.compute_share() + p.comm_share() + p.idle_share(), 1.0);
  EXPECT_DOUBLE_EQ(p.idle_share(), 0.35);
  // Kernels by their time inside the steps: the gemm after the step does not count.
  ASSERT_EQ(p.top_kernels.size(), 4u);
  EXPECT_EQ(p.top_kernels[0].name, "sm90_xmma_gemm_bf16");
  EXPECT_DOUBLE_EQ(p.top_kernels[0].ms, 0.3);
  EXPECT_EQ(p.top_kernels[0].count, 1);
  EXPECT_TRUE(p.top_kernels[1].communication);
  EXPECT_DOUBLE_EQ(p.top_kernels[1].ms, 0.25);
}

TEST(TraceProfileTest, HostTimelineCountsOpsInsideACollectiveAsCommunication) {
  // A CPU trial: step [0, 1000); on thread 1 an all-to-all [100, 400) whose copy [150, 200) is
  // its own work, then a matmul [400, 700); on thread 2 an add [200, 300) beside the collective.
  // compute |[200,300) u [400,700)| = 400, comm 300, overlap 100, busy [100,700) = 600.
  const TraceProfile p = AnalyzeTrace(
      Trace({Event("user_annotation", "ditbench.step 0", 0, 1000),
             Event("user_annotation", "ditbench.collective all_to_all", 100, 300),
             Event("cpu_op", "aten::copy_", 150, 50),
             Event("cpu_op", "aten::mm", 400, 300),
             Event("cpu_op", "aten::add", 200, 100, 2)}),
      "cpu.json");
  EXPECT_EQ(p.timeline, "host");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(p.steps[0].compute_ms, 0.4);
  EXPECT_DOUBLE_EQ(p.steps[0].comm_ms, 0.3);
  EXPECT_DOUBLE_EQ(p.steps[0].overlap_ms, 0.1);
  EXPECT_DOUBLE_EQ(p.steps[0].exposed_comm_ms, 0.2);
  EXPECT_DOUBLE_EQ(p.steps[0].idle_ms, 0.4);
  EXPECT_DOUBLE_EQ(p.total.step_ms, 1.0);
}

TEST(TraceProfileTest, AStepProfiledInSeveralIterationsIsAveragedAndStepsAreSummed) {
  // Step 0 twice (1 ms idle, then 3 ms of which 1 ms compute), step 1 once (2 ms, all compute).
  const TraceProfile p = AnalyzeTrace(
      Trace({Event("user_annotation", "ditbench.step 0", 0, 1000),
             Event("user_annotation", "ditbench.step 1", 1000, 2000),
             Event("cpu_op", "aten::mm", 1000, 2000),
             Event("user_annotation", "ditbench.step 0", 5000, 3000),
             Event("cpu_op", "aten::mm", 5000, 1000)}),
      "t.json");
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].occurrences, 2);
  EXPECT_DOUBLE_EQ(p.steps[0].step_ms, 2.0);
  EXPECT_DOUBLE_EQ(p.steps[0].compute_ms, 0.5);
  EXPECT_DOUBLE_EQ(p.steps[0].idle_ms, 1.5);
  EXPECT_EQ(p.steps[1].occurrences, 1);
  EXPECT_DOUBLE_EQ(p.steps[1].compute_ms, 2.0);
  EXPECT_DOUBLE_EQ(p.total.step_ms, 4.0);
  EXPECT_DOUBLE_EQ(p.total.compute_ms, 2.5);
  EXPECT_EQ(p.total.occurrences, 1);
  EXPECT_DOUBLE_EQ(p.compute_share(), 2.5 / 4.0);
  ASSERT_EQ(p.top_kernels.size(), 1u);
  EXPECT_EQ(p.top_kernels[0].count, 2);
  EXPECT_DOUBLE_EQ(p.top_kernels[0].ms, 3.0);
}

TEST(TraceProfileTest, MalformedTracesAreRefusedWithOneLineNamingTheFile) {
  const auto error = [](const std::string& text) {
    try {
      AnalyzeTrace(text, "rank1.trace.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error(Trace({Event("user_annotation", "ditbench.step 0", 0, 10),
                         Event("cpu_op", "aten::mm", 0, -3)})),
            "rank1.trace.json: traceEvents[1]: 'dur': expected a non-negative number of "
            "microseconds, got -3.0");
  Json no_name = Event("cpu_op", "x", 0, 1);
  no_name.erase("name");
  EXPECT_EQ(error(Trace({no_name})),
            "rank1.trace.json: traceEvents[0]: 'name': expected a string, got null");
  EXPECT_EQ(error(Trace({Event("cpu_op", "x", 0, 1)})),
            "rank1.trace.json: no 'ditbench.step N' ranges; expected one per profiled "
            "denoising step");
  EXPECT_EQ(error(Trace({Event("user_annotation", "ditbench.step two", 0, 1)})),
            "rank1.trace.json: range 'ditbench.step two': expected 'ditbench.step N' with N a "
            "step from 0 to 1000000");
  EXPECT_EQ(error(R"({"traceEvents": [3]})"),
            "rank1.trace.json: traceEvents[0]: expected an object, got 3");
  EXPECT_EQ(error(R"({"events": []})"),
            "rank1.trace.json: expected a Chrome trace: an object with a 'traceEvents' array");
  EXPECT_EQ(error(R"({"traceEvents": [{"ph": "X", "name": "a", "ts": "soon", "dur": 1}]})"),
            "rank1.trace.json: traceEvents[0]: 'ts': expected a non-negative number of "
            "microseconds, got \"soon\"");
  // A nested array is refused as the first element that is no object, before its depth matters.
  EXPECT_EQ(error(std::string(100, '[') + std::string(100, ']')),
            "rank1.trace.json: traceEvents[0]: expected an object, got [...]");
  EXPECT_EQ(error(R"({"traceEvents": [{"ph": "X", "args": )" + std::string(100, '[') +
                  std::string(100, ']') + "}]}"),
            "rank1.trace.json: JSON nested more than 16 levels deep");
  EXPECT_EQ(error(R"({"traceEvents": [], "traceEvents": []})"),
            "rank1.trace.json: 'traceEvents' appears twice");
  EXPECT_EQ(error(R"({"traceEvents": [{"ph": "X", "name": ["a"], "ts": 0, "dur": 1}]})"),
            "rank1.trace.json: traceEvents[0]: 'name': expected a string of at most 4096 bytes, "
            "got []");
  EXPECT_NE(error("{\"traceEvents\": [").find("not valid JSON"), std::string::npos);
}

// A trace is read as a stream of events: an element of traceEvents that is no object is refused
// when it is read (a trace of a hundred thousand numbers stops at the first), fields an event
// is not judged by ("args", other top-level keys) are read and dropped, and the analysis sees
// the same events as before.
TEST(TraceProfileTest, EventsAreReadAsAStreamAndUnjudgedFieldsAreDropped) {
  std::string numbers = R"({"traceEvents": [)";
  for (int i = 0; i < 100000; ++i) {
    if (i) numbers += ',';
    numbers += std::to_string(i);
  }
  numbers += "]}";
  try {
    AnalyzeTrace(numbers, "t.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "t.json: traceEvents[0]: expected an object, got 0");
  }
  Json step = Event("user_annotation", "ditbench.step 0", 0, 10);
  step["args"] = {{"deep", {{"er", {1, 2, {{"x", nullptr}}}}}}};
  Json mm = Event("cpu_op", "aten::mm", 2, 4);
  mm["args"] = {{"Input Dims", {{64, 64}, {64, 64}}}};
  const Json trace = {{"schemaVersion", 1},
                      {"deviceProperties", {{{"name", "x"}}}},
                      {"traceEvents", {step, mm}},
                      {"displayTimeUnit", "ms"}};
  const TraceProfile profile = AnalyzeTrace(trace.dump(), "t.json");
  ASSERT_EQ(profile.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(profile.steps[0].step_ms, 0.010);
  EXPECT_DOUBLE_EQ(profile.steps[0].compute_ms, 0.004);
}

TEST(TraceProfileTest, AnInterruptEndsTheRead) {
  std::string events = R"({"traceEvents": [)";
  for (int i = 0; i < 20000; ++i)
    events += std::string(i ? "," : "") + Event("cpu_op", "aten::mm", i, 1).dump();
  events += "]}";
  EXPECT_THROW(AnalyzeTrace(events, "t.json", [] { return true; }), JsonReadCancelled);
  EXPECT_NO_THROW(AnalyzeTrace(
      R"({"traceEvents": [)" + Event("user_annotation", "ditbench.step 0", 0, 10).dump() + "]}",
      "t.json", [] { return true; }));  // too short to be asked
}

void WriteGzip(const std::filesystem::path& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

TEST(TraceProfileTest, ReadsPlainAndGzipFilesAlikeAndRefusesACutGzip) {
  test::TempDir dir;
  const std::string text = Trace(DeviceStep());
  std::ofstream(dir / "rank0.trace.json") << text;
  WriteGzip(dir / "rank0.trace.json.gz", text);
  const TraceProfile plain = ReadTraceProfile(dir / "rank0.trace.json");
  EXPECT_EQ(ReadTraceProfile(dir / "rank0.trace.json.gz"), plain);
  EXPECT_EQ(plain, AnalyzeTrace(text, "x"));

  std::ifstream in(dir / "rank0.trace.json.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "cut.json.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    ReadTraceProfile(dir / "cut.json.gz");
    FAIL() << "a cut gzip file was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).find((dir / "cut.json.gz").string() + ": not a complete gzip"),
              0u)
        << e.what();
  }
}

// A rank names its trace file; one that is a link out of the run folder is refused, not read.
TEST(TraceProfileTest, ATraceThatLinksOutOfTheRunFolderIsRefused) {
  test::TempDir dir;
  std::filesystem::create_directory(dir / "run");
  std::ofstream(dir / "elsewhere.json") << Trace(DeviceStep());
  std::filesystem::create_symlink(dir / "elsewhere.json", dir / "run" / "rank0.trace.json");
  try {
    ReadTraceProfile(dir / "run" / "rank0.trace.json");
    FAIL() << "a linked trace was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank0.trace.json: is a symbolic link"),
              std::string::npos)
        << e.what();
  }
}

TEST(TraceProfileTest, AGzipThatDecompressesPastTheCapIsRefused) {
  test::TempDir dir;
  const std::filesystem::path bomb = dir / "bomb.trace.json.gz";
  gzFile file = gzopen(bomb.c_str(), "wb9");
  ASSERT_NE(file, nullptr);
  const std::string spaces(1 << 20, ' ');  // compresses about 1000 to 1
  for (std::uint64_t written = 0; written <= kMaxTraceBytes; written += spaces.size())
    ASSERT_EQ(gzwrite(file, spaces.data(), static_cast<unsigned>(spaces.size())),
              static_cast<int>(spaces.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
  EXPECT_LT(std::filesystem::file_size(bomb), kMaxTraceBytes / 100);
  try {
    ReadTraceText(bomb);
    FAIL() << "the bomb was decompressed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              bomb.string() + ": decompresses to more than " + std::to_string(kMaxTraceBytes) +
                  " bytes");
  }
}

TEST(TraceProfileTest, ProfileJsonRoundTrips) {
  const TraceProfile p = AnalyzeTrace(Trace(DeviceStep()), "t.json");
  EXPECT_EQ(TraceProfileFromJson(TraceProfileJson(p)), p);
  Json broken = TraceProfileJson(p);
  broken["total"].erase("idle_ms");
  EXPECT_THROW(TraceProfileFromJson(broken), std::invalid_argument);
}

// A trace torch.profiler wrote (torch 2.11, CPU): python/ditbench_result.py's profiled pass
// of a function that marks two steps of a 256x256 matmul each, two profiled calls, then
// export_chrome_trace to .json.gz. Kineto's own layout: metadata, "Trace" spans, cpu_ops
// nested in the step ranges.
TEST(TraceProfileTest, ReadsATraceTorchProfilerWrote) {
  const TraceProfile p = ReadTraceProfile(std::filesystem::path(DITBENCH_FIXTURES) /
                                          "torch-profiler-cpu.trace.json.gz");
  EXPECT_EQ(p.timeline, "host");
  ASSERT_EQ(p.steps.size(), 2u);
  for (const StepProfile& s : p.steps) {
    EXPECT_EQ(s.occurrences, 2);
    EXPECT_GT(s.compute_ms, 0);
    EXPECT_EQ(s.comm_ms, 0);
    // Timestamps near 4.7e12 us hold about 1e-3 us: the split adds up to that.
    EXPECT_NEAR(s.compute_ms + s.exposed_comm_ms + s.idle_ms, s.step_ms, 1e-5);
  }
  ASSERT_FALSE(p.top_kernels.empty());
  EXPECT_EQ(p.top_kernels[0].name.rfind("aten::", 0), 0u) << p.top_kernels[0].name;
}

}  // namespace
}  // namespace ditbench::trace_profile_test
