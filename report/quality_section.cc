#include "report/quality_section.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "analysis/speedup.h"
#include "base/run_folder_file.h"
#include "report/chart_style.h"
#include "report/html_text.h"
#include "report/metric_columns.h"

namespace ditbench {
namespace {

constexpr const char* kPngMagic = "\x89PNG\r\n\x1a\n";
// Kept by the coordinator when a picture could not be written (runner/output_image.h).
constexpr const char* kImageErrorFile = "output-png-error.txt";

// The PNG files of a row's run folder in frame order: output.png for an image, each
// output-frame<F>.png for a video.
std::vector<std::filesystem::path> PictureFiles(const ResultRow& row) {
  const std::filesystem::path dir = row.run_dir;
  if (row.frames == 0) return {dir / "output.png"};
  std::vector<std::pair<long, std::filesystem::path>> frames;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("output-frame") || !name.ends_with(".png")) continue;
    const std::string number = name.substr(12, name.size() - 16);
    if (number.empty() || !std::all_of(number.begin(), number.end(), ::isdigit) ||
        number.size() > 9)
      continue;
    frames.emplace_back(std::stol(number), entry.path());
  }
  std::sort(frames.begin(), frames.end());
  std::vector<std::filesystem::path> files;
  for (auto& [frame, path] : frames) files.push_back(std::move(path));
  if (files.empty()) files.push_back(dir / "output-frame0.png");
  return files;
}

// One picture as an <img> with a data: URI, or a note saying why it is left out. The picture
// and the note are the run folder's: read as untrusted files (base/run_folder_file.h), so a
// link out of the folder, a FIFO or a huge file is a note, never a hang or a leak.
std::string Picture(const std::filesystem::path& file, const std::string& alt) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    std::string why = fmt::format("no picture: {} is missing", file.string());
    const std::string note = ReadRunFolderNote(file.parent_path(), kImageErrorFile);
    if (!note.empty()) why += " (" + note + ")";
    return fmt::format("<p class=\"note image-missing\">{}</p>", HtmlEscape(why));
  }
  std::string png;
  try {
    const RegularFile opened = OpenRunFolderFile(file, std::numeric_limits<std::uint64_t>::max());
    if (opened.size > kMaxEmbeddedImageBytes)
      return fmt::format("<p class=\"note image-missing\">picture left out: {} is {:.0f} KiB, "
                         "above the report's cap of {} KiB for an embedded picture</p>",
                         HtmlEscape(file.string()), double(opened.size) / 1024,
                         kMaxEmbeddedImageBytes / 1024);
    png = ReadRegularFileAt(opened, file, 0, opened.size);
  } catch (const std::exception& e) {
    return fmt::format("<p class=\"note image-missing\">no picture: {}</p>", HtmlEscape(e.what()));
  }
  if (!png.starts_with(std::string(kPngMagic, 8)))
    return fmt::format("<p class=\"note image-missing\">no picture: {} is not a PNG</p>",
                       HtmlEscape(file.string()));
  return fmt::format("<img src=\"data:image/png;base64,{}\" alt=\"{}\" title=\"{}\">",
                     Base64(png), HtmlEscape(alt), HtmlEscape(file.string()));
}

std::string PsnrText(const std::optional<double>& psnr) {
  const std::string text = MetricText(psnr, "psnr");
  return psnr && !std::isinf(*psnr) ? text + " dB" : text;
}

std::string ErrorText(const std::optional<double>& error) {
  if (!error) return "-";
  return *error == 0 ? "0 (exact)" : fmt::format("{:.2g}", *error);
}

// One side of the pair: its pictures and its numbers.
std::string Figure(const ResultRow& row, const std::string& title, bool reference) {
  std::string pictures;
  for (const std::filesystem::path& file : PictureFiles(row))
    pictures += Picture(file, title + ": " + file.filename().string());
  std::string numbers =
      reference ? std::string("the reference: PSNR and SSIM of the others are against it")
                : fmt::format("PSNR {}, SSIM {}, output error {}", PsnrText(row.psnr),
                              MetricText(row.ssim, "ssim"), ErrorText(row.output_error));
  if (row.below_quality())
    numbers += fmt::format(" <span class=\"below\">below quality: {}</span>",
                           HtmlEscape(std::string(MissedGates(row.quality))));
  return fmt::format("<figure>{}<figcaption><strong>{}</strong> (trial <code>{}</code>)<br>{}"
                     "</figcaption></figure>",
                     pictures, HtmlEscape(title), HtmlEscape(row.trial_key), numbers);
}

}  // namespace

std::string Base64(const std::string& bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(std::max(written, 0)));
  return text;
}

std::string RenderImagePair(const std::vector<ResultRow>& rows) {
  if (rows.empty() || rows.front().scope != "pipeline") return "";
  // The worst parallel output: the lowest PSNR, then the largest output error.
  const ResultRow* worst = nullptr;
  const auto badness = [](const ResultRow& r) {
    return std::pair{-r.psnr.value_or(std::numeric_limits<double>::infinity()),
                     r.output_error.value_or(0)};
  };
  for (const ResultRow& row : rows) {
    if (!row.measured() || row.world_size <= 1 || (!row.psnr && !row.output_error)) continue;
    if (!worst || badness(row) > badness(*worst)) worst = &row;
  }
  if (!worst) return "";
  const OneRankBaselines baselines(rows);
  const ResultRow* one = baselines.For(*worst);
  if (!one) return "";
  return "<div class=\"image-pair\"><h3>The decoded image: 1 rank against the worst parallel "
         "output of the group</h3>\n" +
         Figure(*one, "1 rank", /*reference=*/true) +
         Figure(*worst, ConfigurationLabel(*worst), /*reference=*/false) +
         fmt::format("<p class=\"note\">The pictures are the run folders' PNGs (the VAE's output "
                     "clamped to [-1, 1]), embedded up to {} KiB each.</p></div>\n",
                     kMaxEmbeddedImageBytes / 1024);
}

std::vector<bool> ParetoFront(const std::vector<ParetoPoint>& points) {
  std::vector<bool> front(points.size(), true);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (const ParetoPoint& other : points) {
      const ParetoPoint& p = points[i];
      if (other.quality >= p.quality && other.speedup >= p.speedup &&
          (other.quality > p.quality || other.speedup > p.speedup)) {
        front[i] = false;
        break;
      }
    }
  return front;
}

nlohmann::json ParetoChart(const std::string& id, const std::string& title,
                           const std::vector<ResultRow>& rows) {
  const OneRankBaselines baselines(rows);
  // PSNR where some parallel row has one (scope pipeline), else the output error.
  // A row is its own reference when it runs on 1 rank without a step cache.
  const auto reference = [](const ResultRow& r) { return r.world_size == 1 && !HasStepCache(r); };
  const bool by_psnr = std::any_of(rows.begin(), rows.end(), [&](const ResultRow& r) {
    return r.measured() && !reference(r) && r.psnr;
  });
  struct Point {
    const ResultRow* row;
    Speedup speedup;  // the row's one speedup (analysis/speedup.h), its doubts with it
    double x;
    bool exact;
  };
  std::vector<Point> points;
  double finite_max = 0, smallest_error = 0;
  for (const ResultRow& row : rows) {
    const std::optional<Speedup> speedup = SpeedupOf(baselines, row);
    if (!speedup) continue;
    // The 1-rank trial without a cache is its own reference: exact.
    const bool one_rank = reference(row);
    if (by_psnr) {
      if (!one_rank && !row.psnr) continue;
      const bool exact = one_rank || std::isinf(*row.psnr);
      if (!exact) finite_max = std::max(finite_max, *row.psnr);
      points.push_back({&row, *speedup, exact ? 0 : *row.psnr, exact});
    } else {
      if (!one_rank && !row.output_error) continue;
      const double error = one_rank ? 0 : *row.output_error;
      if (error > 0 && (smallest_error == 0 || error < smallest_error)) smallest_error = error;
      points.push_back({&row, *speedup, error, error == 0});
    }
  }
  const bool parallel =
      std::any_of(points.begin(), points.end(), [&](const Point& p) { return !reference(*p.row); });
  if (points.size() < 2 || !parallel) return nullptr;
  // Where an exact output sits: past the best PSNR, or a decade below the smallest error.
  const double exact_at =
      by_psnr ? (finite_max > 0 ? std::ceil(finite_max / 10) * 10 + 10 : 100)
              : (smallest_error > 0 ? std::pow(10.0, std::floor(std::log10(smallest_error)) - 1)
                                    : 1e-9);
  std::vector<ParetoPoint> scored;
  for (Point& p : points) {
    if (p.exact) p.x = exact_at;
    scored.push_back({by_psnr ? p.x : -p.x, p.speedup.value});
  }
  const std::vector<bool> front = ParetoFront(scored);
  nlohmann::json data = nlohmann::json::array(), line = nlohmann::json::array();
  std::vector<std::pair<double, double>> front_points;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ResultRow& row = *points[i].row;
    const Speedup& speedup = points[i].speedup;
    data.push_back({{"x", points[i].x},
                    {"y", speedup.value},
                    {"reference", speedup.ReferenceText()},
                    {"label", ConfigurationLabel(row)},
                    {"color", StrategyColor(StrategyName(row))},
                    {"front", bool(front[i])},
                    {"exact", points[i].exact},
                    {"below", row.below_quality()},
                    {"quality", row.quality}});
    // A doubtful point is drawn hollow with its doubts in the tooltip (analysis/trust.h).
    if (!speedup.trust.plain()) data.back()["doubt"] = speedup.trust.Names();
    if (front[i]) front_points.emplace_back(points[i].x, speedup.value);
  }
  // Points at the same place are named once, together ("ring=2, ulysses=2").
  for (std::size_t i = 0; i < data.size(); ++i) {
    std::string name = data[i]["label"];
    for (std::size_t j = 0; j < data.size(); ++j) {
      if (j == i || data[j]["x"] != data[i]["x"] || data[j]["y"] != data[i]["y"]) continue;
      if (j < i) name.clear();
      else if (!name.empty()) name += ", " + data[j]["label"].get<std::string>();
      if (name.empty()) break;
    }
    data[i]["name"] = name;
  }
  std::sort(front_points.begin(), front_points.end());
  for (const auto& [x, y] : front_points) line.push_back({{"x", x}, {"y", y}});
  return {{"id", id},
          {"kind", "pareto"},
          {"title", title},
          {"x_title", by_psnr ? "PSNR of the decoded image vs 1 rank (dB; right is better)"
                              : "output error (rel. L2 vs 1 rank, log scale; left is better)"},
          {"y_title", "speedup vs the 1-rank reference (the exact computation, no cache)"},
          {"log_x", !by_psnr},
          {"exact_at", exact_at},
          {"points", data},
          {"front", line}};
}

}  // namespace ditbench
