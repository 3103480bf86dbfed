// The report's output-quality pieces (report/quality_section.h): the Pareto front, the chart's
// points, and the image pair with its size cap.
#include "report/quality_section.h"

#include <sys/stat.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/configuration_group.h"
#include "base/run_folder_file.h"
#include "tests/support/temp_dir.h"

namespace ditbench::quality_section_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ResultRow Row(int ulysses, int pipefusion, double latency_ms, std::optional<double> psnr) {
  ResultRow row;
  row.campaign = 1;
  row.status = "ok";
  row.model = "pixart-alpha";
  row.scope = "pipeline";
  row.resolution = row.height = 256;
  row.ulysses = ulysses;
  row.pipefusion = pipefusion;
  row.ring = row.cfg = row.dp = 1;
  row.world_size = ulysses * pipefusion;
  row.latency_ms = latency_ms;
  row.psnr = psnr;
  row.trial_key = "k" + std::to_string(ulysses) + std::to_string(pipefusion);
  return row;
}

TEST(ParetoFrontTest, APointIsOnTheFrontUnlessAnotherIsAtLeastAsGoodInBoth) {
  const std::vector<bool> front =
      ParetoFront({{40, 1.0}, {30, 2.0}, {35, 1.5}, {30, 1.5}, {25, 1.9}, {30, 2.0}});
  EXPECT_EQ(front, (std::vector<bool>{true, true, true, false, false, true}));
}

TEST(ParetoChartTest, PointsAreSpeedupAgainstPsnrWithTheFrontAndBelowQualityMarked) {
  ResultRow one = Row(1, 1, 100, std::nullopt), ulysses = Row(2, 1, 60, 140.0),
            fused = Row(1, 2, 40, 25.0), slow = Row(4, 1, 80, 120.0);
  fused.quality = "below: psnr 25 < 35";
  const nlohmann::json chart = ParetoChart("c", "t", {fused, ulysses, slow, one});
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "pareto");
  EXPECT_FALSE(chart["log_x"]);
  EXPECT_EQ(chart["exact_at"], 150);  // past the best finite PSNR
  std::map<std::string, nlohmann::json> by_label;
  for (const auto& p : chart["points"]) by_label[p["label"]] = p;
  ASSERT_EQ(by_label.size(), 4u);
  EXPECT_EQ(by_label["pipefusion=2"]["y"], 2.5);
  EXPECT_EQ(by_label["pipefusion=2"]["x"], 25.0);
  EXPECT_TRUE(by_label["pipefusion=2"]["below"]);
  EXPECT_TRUE(by_label["pipefusion=2"]["front"]);  // the fastest, however wrong
  EXPECT_TRUE(by_label["ulysses=2"]["front"]);
  EXPECT_FALSE(by_label["ulysses=4"]["front"]);    // slower and worse than ulysses=2
  EXPECT_TRUE(by_label["1 rank"]["exact"]);
  EXPECT_EQ(by_label["1 rank"]["x"], 150);
  EXPECT_TRUE(by_label["1 rank"]["front"]);        // exact output
  EXPECT_EQ(chart["front"].size(), 3u);
  // Points at one place are named once, together.
  ResultRow ring = Row(1, 1, 60, 140.0);
  ring.ring = 2;
  ring.world_size = 2;
  const nlohmann::json shared = ParetoChart("c", "t", {ulysses, ring, one});
  EXPECT_EQ(shared["points"][0]["name"], "ulysses=2, ring=2");
  EXPECT_EQ(shared["points"][1]["name"], "");
  // Without a PSNR (scope denoise), the output error on a log axis, 0 a decade below the rest.
  ResultRow e1 = Row(1, 1, 100, std::nullopt), e2 = Row(2, 1, 50, std::nullopt);
  e1.scope = e2.scope = "denoise";
  e2.output_error = 3e-4;
  const nlohmann::json errors = ParetoChart("c", "t", {e1, e2});
  ASSERT_FALSE(errors.is_null());
  EXPECT_TRUE(errors["log_x"]);
  EXPECT_DOUBLE_EQ(errors["exact_at"].get<double>(), 1e-5);
  EXPECT_TRUE(ParetoChart("c", "t", {e1}).is_null());
  ResultRow other = e1;  // 1-rank trials only (two campaigns): nothing to trade
  other.campaign = 2;
  EXPECT_TRUE(ParetoChart("c", "t", {e1, other}).is_null());
}

// A Pareto point is the row's one speedup (the ranking table's), with its reference named and
// its doubts: a cached trial measured on a busy machine is drawn hollow, not as a plain 4.7x.
TEST(ParetoChartTest, APointCarriesItsSpeedupsReferenceAndDoubts) {
  ResultRow one = Row(1, 1, 100, std::nullopt), cached = Row(2, 1, 21, 40.0);
  nlohmann::json computation = RowIdentity(cached);  // the row's columns, and a cache
  computation["cache"] = {{"kind", "fbcache"}, {"threshold", 0.2}, {"warmup_steps", 1}};
  cached.computation = computation.dump();
  cached.busy = true;
  const nlohmann::json chart = ParetoChart("c", "t", {cached, one});
  ASSERT_FALSE(chart.is_null());
  const nlohmann::json& point = chart["points"][0];
  EXPECT_EQ(point["label"], "ulysses=2 cache=fbcache,threshold=0.2,warmup_steps=1");
  EXPECT_DOUBLE_EQ(point["y"].get<double>(), 100.0 / 21);
  EXPECT_EQ(point["reference"], "1 rank without cache");
  EXPECT_THAT(point.value("doubt", ""), HasSubstr("busy"));
  EXPECT_THAT(chart["points"][1].value("doubt", ""), Not(HasSubstr("busy")));  // quiet 1 rank
}

TEST(Base64Test, MatchesRfc4648) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

TEST(ImagePairTest, TheOneRankImageAndTheWorstParallelOneAreEmbeddedUnderTheCap) {
  test::TempDir dir;
  ResultRow one = Row(1, 1, 100, std::nullopt), ulysses = Row(2, 1, 60, 140.0),
            fused = Row(1, 2, 40, 25.0);
  for (ResultRow* row : {&one, &ulysses, &fused}) {
    row->run_dir = (dir.path() / row->trial_key).string();
    std::filesystem::create_directories(row->run_dir);
  }
  std::ofstream(std::filesystem::path(one.run_dir) / "output.png", std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << "one";
  // The worst (lowest PSNR) parallel picture is larger than the cap: left out, and said so.
  std::ofstream(std::filesystem::path(fused.run_dir) / "output.png", std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << std::string(kMaxEmbeddedImageBytes, 'x');
  const std::string html = RenderImagePair({fused, ulysses, one});
  EXPECT_THAT(html, HasSubstr("data:image/png;base64," + Base64(std::string("\x89PNG\r\n\x1a\n", 8) + "one")));
  EXPECT_THAT(html, HasSubstr("<strong>pipefusion=2</strong>"));
  EXPECT_THAT(html, HasSubstr("PSNR 25.0 dB"));
  EXPECT_THAT(html, HasSubstr("picture left out: " +
                              (std::filesystem::path(fused.run_dir) / "output.png").string() +
                              " is 1024 KiB, above the report's cap of 1024 KiB"));
  EXPECT_EQ(html.find("data:image/png;base64,", html.find("pipefusion=2")), std::string::npos);
  // A scope without a decoded image has no pair.
  one.scope = ulysses.scope = fused.scope = "denoise";
  EXPECT_EQ(RenderImagePair({fused, ulysses, one}), "");
}

// A 1-rank row and a worse parallel row in run folders under `dir`, neither with a picture:
// what a test puts in the parallel row's folder is what the report shows about it.
struct MissingPictures {
  explicit MissingPictures(const test::TempDir& dir)
      : one(Row(1, 1, 100, std::nullopt)), fused(Row(1, 2, 40, 25.0)) {
    for (ResultRow* row : {&one, &fused}) {
      row->run_dir = (dir.path() / row->trial_key).string();
      std::filesystem::create_directories(row->run_dir);
    }
    std::ofstream(dir.path() / "secret.txt") << "password=hunter2\n";
  }
  std::filesystem::path Folder() const { return fused.run_dir; }
  std::string Render() const { return RenderImagePair({fused, one}); }
  ResultRow one, fused;
};

// The note about a missing picture was read with a plain stream: as a link to a file the user
// can read, its first line landed in the HTML.
TEST(ImagePairTest, ANoteThatLinksOutOfTheRunFolderIsNotShown) {
  test::TempDir dir;
  MissingPictures rows(dir);
  std::filesystem::create_symlink(dir.path() / "secret.txt",
                                  rows.Folder() / "output-png-error.txt");
  const std::string html = rows.Render();
  EXPECT_THAT(html, HasSubstr("no picture: " + (rows.Folder() / "output.png").string() +
                              " is missing</p>"));
  EXPECT_EQ(html.find("hunter2"), std::string::npos);
}

// As a FIFO the note blocked `report` for ever; it is refused at once.
TEST(ImagePairTest, ANoteThatIsAFifoDoesNotBlockTheReport) {
  test::TempDir dir;
  MissingPictures rows(dir);
  ASSERT_EQ(::mkfifo((rows.Folder() / "output-png-error.txt").c_str(), 0644), 0);
  EXPECT_THAT(rows.Render(), HasSubstr("is missing</p>"));
}

TEST(ImagePairTest, AnOversizedNoteShowsOnlyItsCappedFirstLine) {
  test::TempDir dir;
  MissingPictures rows(dir);
  std::ofstream(rows.Folder() / "output-png-error.txt")
      << std::string(100 * kMaxRunFolderNoteBytes, 'e');
  const std::string html = rows.Render();
  EXPECT_THAT(html, HasSubstr("(" + std::string(kMaxRunFolderNoteBytes, 'e') + ")"));
  EXPECT_EQ(html.find(std::string(kMaxRunFolderNoteBytes + 1, 'e')), std::string::npos);
}

TEST(ImagePairTest, APictureThatLinksOutOfTheRunFolderIsNotEmbedded) {
  test::TempDir dir;
  MissingPictures rows(dir);
  std::ofstream(dir.path() / "private.png", std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << "private";
  std::filesystem::create_symlink(dir.path() / "private.png", rows.Folder() / "output.png");
  const std::string html = rows.Render();
  EXPECT_THAT(html, HasSubstr("no picture: " + (rows.Folder() / "output.png").string() +
                              ": is a symbolic link"));
  EXPECT_EQ(html.find(Base64(std::string("\x89PNG\r\n\x1a\n", 8) + "private")),
            std::string::npos);
}

TEST(ImagePairTest, APictureThatIsAFifoDoesNotBlockTheReport) {
  test::TempDir dir;
  MissingPictures rows(dir);
  ASSERT_EQ(::mkfifo((rows.Folder() / "output.png").c_str(), 0644), 0);
  EXPECT_THAT(rows.Render(), HasSubstr("output.png: is a FIFO; expected a regular file"));
}

}  // namespace
}  // namespace ditbench::quality_section_test
