// Quality gates and decoded images end to end without LibTorch: the real coordinator runs
// tests/fixtures/fake_worker.sh, whose rank 0 leaves a decoded image whose error depends on the
// layout (tests/fixtures/fake_output.py: PipeFusion with fewer synchronous steps is faster and
// further from the 1-rank image). A `quality: {min_psnr: 35}` gate marks the fastest
// PipeFusion trial below quality; the report's winner summary skips it and says why, shows the
// image pair and the Pareto chart; every trial's run folder holds its output.png.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "launch/local_launcher.h"
#include "metrics/png_image.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::quality_gate_e2e_test {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

constexpr const char* kGatedSweep = R"(name: gated
quality: {min_psnr: 35}
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 4, warmup: 1, repeats: 3,
           scope: pipeline, timeout: 30s}
include:
  - {ulysses: 1}
  - {ulysses: 2}
  - {pipefusion: 2, pipefusion_warmup_steps: 1}
  - {pipefusion: 2, pipefusion_warmup_steps: 2}
)";

class QualityGateE2eTest : public ::testing::Test {
 protected:
  std::vector<ResultRow> Run() {
    std::ofstream(dir_ / "sweep.yaml") << kGatedSweep;
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_MODE=ok", "FAKE_WORKER_IMAGE=1",
                            "FAKE_WORKER_SPEED_LAW=layout"});
    EXPECT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out_, err_), 0)
        << out_.str() << err_.str();
    return ResultsDb::Open(o.db, /*read_only=*/true)->reader().Results({1});
  }
  static const ResultRow& Find(const std::vector<ResultRow>& rows, int ulysses, int pipefusion,
                               int sync_steps) {
    for (const ResultRow& row : rows)
      if (row.ulysses == ulysses && row.pipefusion == pipefusion &&
          (pipefusion == 1 || row.pipefusion_warmup_steps == sync_steps))
        return row;
    throw std::runtime_error("no such row");
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
};

TEST_F(QualityGateE2eTest, AGateThatPipeFusionMissesMarksItAndTheWinnerSummarySkipsIt) {
  const std::vector<ResultRow> rows = Run();
  ASSERT_EQ(rows.size(), 4u);
  for (const ResultRow& row : rows) ASSERT_EQ(row.status, "ok") << row.error;
  const ResultRow& one = Find(rows, 1, 1, 1);
  const ResultRow& ulysses = Find(rows, 2, 1, 1);
  const ResultRow& fused1 = Find(rows, 1, 2, 1);
  const ResultRow& fused2 = Find(rows, 1, 2, 2);

  // Fewer synchronous steps: faster, and a lower PSNR.
  ASSERT_TRUE(fused1.psnr && fused2.psnr && ulysses.psnr);
  EXPECT_LT(*fused1.latency_ms, *fused2.latency_ms);
  EXPECT_LT(*fused2.latency_ms, *ulysses.latency_ms);
  EXPECT_LT(*fused1.psnr, *fused2.psnr);
  EXPECT_LT(*fused1.psnr, 35);
  EXPECT_GT(*fused2.psnr, 35);
  EXPECT_GT(*ulysses.psnr, 100);  // float-order noise only

  // The gate marks the one that misses it, with its numbers; the others pass.
  EXPECT_EQ(fused1.quality, fmt::format("below: psnr {:.3g} < 35", *fused1.psnr));
  EXPECT_TRUE(fused1.below_quality());
  EXPECT_EQ(fused2.quality, "ok");
  EXPECT_EQ(ulysses.quality, "ok");
  EXPECT_EQ(one.quality, "ok");

  // Every run folder keeps its decoded image; the 1-rank one is the output, clamped and mapped.
  const NpyArray output = ReadNpy(std::filesystem::path(one.run_dir) / kOutputFileName);
  const RgbImage reference = DecodePng(ReadFile(std::filesystem::path(one.run_dir) / "output.png"));
  ASSERT_EQ(reference.width, 64);
  ASSERT_EQ(reference.height, 48);
  const std::size_t plane = 64 * 48;
  for (std::size_t p : {std::size_t{0}, std::size_t{1000}, plane - 1})
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_EQ(reference.pixels[p * 3 + c], ToLevel(output.data[c * plane + p]));
  const RgbImage stale = DecodePng(ReadFile(std::filesystem::path(fused1.run_dir) / "output.png"));
  EXPECT_NE(stale.pixels, reference.pixels);

  // The report: the winner is PipeFusion with two synchronous steps, the faster one is named as
  // skipped with the gate it missed; the image pair is embedded; the Pareto chart is drawn.
  ReportOptions options;
  options.db = dir_ / "results.db";
  const std::string html = RenderHtmlReport(options);
  const std::size_t summary = html.find("id=\"summary\"");
  const std::size_t end = html.find("</table>", summary);
  ASSERT_NE(summary, std::string::npos);
  const std::string winners = html.substr(summary, end - summary);
  EXPECT_THAT(winners, HasSubstr("<strong>pipefusion=2 pipefusion_warmup_steps=2</strong>"));
  EXPECT_THAT(winners, HasSubstr(fmt::format("skipped pipefusion=2: below quality (psnr {:.3g} "
                                             "&lt; 35)", *fused1.psnr)));
  EXPECT_THAT(html, HasSubstr("\"kind\":\"pareto\""));
  EXPECT_THAT(html, HasSubstr("The decoded image: 1 rank against the worst parallel output"));
  std::size_t images = 0;
  for (std::size_t at = html.find("data:image/png;base64,"); at != std::string::npos;
       at = html.find("data:image/png;base64,", at + 1))
    ++images;
  EXPECT_EQ(images, 2u);
  EXPECT_THAT(html, HasSubstr("<span class=\"below\" title=\"" +
                              fmt::format("below: psnr {:.3g} &lt; 35", *fused1.psnr) +
                              "\">below quality</span>"));
}

}  // namespace
}  // namespace ditbench::quality_gate_e2e_test
