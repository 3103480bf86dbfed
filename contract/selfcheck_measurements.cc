#include "contract/selfcheck_measurements.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/untrusted_input.h"

namespace ditbench {
namespace {

constexpr std::uint64_t kMaxSelfcheckBytes = 1ull << 20;
constexpr int kMaxSelfcheckDepth = 8;

[[noreturn]] void Fail(const std::string& where, const std::string& field,
                       const std::string& expected) {
  throw std::runtime_error(fmt::format("{}: '{}': expected {}", where, field, expected));
}

// A finite number >= 0 (figures are times, rates and errors).
double Figure(const nlohmann::json& object, const std::string& key, const std::string& path,
              const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number() || !std::isfinite(found->get<double>()) ||
      found->get<double>() < 0)
    Fail(where, path + key, "a finite number >= 0");
  return found->get<double>();
}

// A count (pixels, threads, ranks): a number from 1 to 100000, read as a whole number.
int Count(const nlohmann::json& object, const std::string& key, const std::string& path,
          const std::string& where) {
  const double value = Figure(object, key, path, where);
  if (value < 1 || value > 1e5) Fail(where, path + key, "a whole number from 1 to 100000");
  return static_cast<int>(value);
}

const nlohmann::json* Object(const nlohmann::json& json, const std::string& key,
                             const std::string& where) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return nullptr;
  if (!found->is_object()) Fail(where, key, "an object");
  return &*found;
}

std::string Text(const nlohmann::json& json, const std::string& key, const std::string& where) {
  const auto found = json.find(key);
  if (found == json.end()) return "";
  if (!found->is_string()) Fail(where, key, "text");
  return found->get<std::string>();
}

std::map<std::string, double> Figures(const nlohmann::json& object, const std::string& path,
                                      const std::string& where) {
  std::map<std::string, double> figures;
  if (!object.is_object()) Fail(where, path, "an object of numbers");
  for (const auto& [name, value] : object.items())
    figures[name] = Figure(object, name, path + ".", where);
  return figures;
}

// A figure's bound: "" when `value` lies in [low, high], else what is wrong with it.
std::string OutOfBounds(const std::string& field, double value, double low, double high,
                        std::string_view unit) {
  if (value >= low && value <= high) return "";
  return fmt::format("{} {:g} {} (expected {:g} to {:g} {})", field, value, unit, low, high, unit);
}

// Each figure of `m` against its bound, in the file's order; the first one out of bounds.
std::string FirstOutOfBounds(const SelfcheckMeasurements& m) {
  std::vector<std::string> found;
  const auto ms = [&](const std::string& field, double value) {
    found.push_back(OutOfBounds(field, value, kMinSelfcheckMs, kMaxSelfcheckMs, "ms"));
  };
  const auto at_most = [&](const std::string& field, double value, double high,
                           std::string_view unit) {
    found.push_back(OutOfBounds(field, value, 0, high, unit));
  };
  if (m.timing) {
    ms("timing.gemm_ms", m.timing->gemm_ms);
    ms("timing.gemm_reference_ms", m.timing->gemm_reference_ms);
    ms("timing.forward_ms", m.timing->forward_ms);
    ms("timing.forward_reference_ms", m.timing->forward_reference_ms);
  }
  if (m.cuda_graph) {
    ms("cuda_graph.eager_ms", m.cuda_graph->eager_ms);
    ms("cuda_graph.graph_ms", m.cuda_graph->graph_ms);
  }
  if (m.throughput) {
    for (const auto& [name, tflops] : m.throughput->matmul_tflops)
      at_most("throughput.matmul_tflops." + name, tflops, kMaxSelfcheckTflops, "TFLOP/s");
    for (const auto& [name, tflops] : m.throughput->attention_tflops)
      at_most("throughput.attention_tflops." + name, tflops, kMaxSelfcheckTflops, "TFLOP/s");
    if (m.throughput->memory_gbps)
      at_most("throughput.memory_gbps", *m.throughput->memory_gbps, kMaxSelfcheckGbps, "GB/s");
  }
  if (m.comm) {
    at_most("comm.all_to_all_gbps", m.comm->all_to_all_gbps, kMaxSelfcheckGbps, "GB/s");
    at_most("comm.all_gather_gbps", m.comm->all_gather_gbps, kMaxSelfcheckGbps, "GB/s");
    at_most("comm.latency_us", m.comm->latency_us, kMaxSelfcheckMs * 1e3, "us");
  }
  if (m.calibration) {
    at_most("calibration.setup_s", m.calibration->setup_s, kMaxSelfcheckMs / 1e3, "s");
    at_most("calibration.measure_s", m.calibration->measure_s, kMaxSelfcheckMs / 1e3, "s");
    at_most("calibration.build_ms", m.calibration->build_ms, kMaxSelfcheckMs, "ms");
    for (std::size_t i = 0; i < m.calibration->forward.size(); ++i) {
      const SelfcheckForwardRate& f = m.calibration->forward[i];
      const std::string entry = fmt::format("calibration.forward[{}].", i);
      ms(entry + "ms", f.ms);
      // GFLOP per ms is TFLOP/s; a forward split by Ulysses shares its work among its ranks.
      if (f.ms > 0)
        at_most(entry + "gflop / ms", f.gflop / std::max(f.ulysses, 1) / f.ms, kMaxSelfcheckTflops,
                "TFLOP/s per device");
    }
  }
  if (m.launch_wall_s) at_most("launch_wall_s", *m.launch_wall_s, kMaxSelfcheckMs / 1e3, "s");
  for (const std::string& problem : found)
    if (!problem.empty()) return problem;
  return "";
}

}  // namespace

std::optional<std::string> ImplausibleSelfcheckFigure(const SelfcheckMeasurements& m) {
  std::string problem = FirstOutOfBounds(m);
  if (problem.empty()) return std::nullopt;
  return problem;
}

nlohmann::json SelfcheckJson(const SelfcheckMeasurements& m) {
  nlohmann::json json = {{"format", kSelfcheckFormat}, {"version", kSelfcheckFormatVersion},
                         {"device", m.device},         {"device_name", m.device_name},
                         {"torch", m.torch},           {"threads", m.threads},
                         {"skipped", m.skipped},       {"errors", m.errors}};
  if (m.timing)
    json["timing"] = {{"gemm_ms", m.timing->gemm_ms},
                      {"gemm_reference_ms", m.timing->gemm_reference_ms},
                      {"forward_ms", m.timing->forward_ms},
                      {"forward_reference_ms", m.timing->forward_reference_ms},
                      {"gemm_aa_pct", m.timing->gemm_aa_pct},
                      {"forward_aa_pct", m.timing->forward_aa_pct}};
  if (m.cuda_graph)
    json["cuda_graph"] = {{"max_abs_diff", m.cuda_graph->max_abs_diff},
                          {"eager_ms", m.cuda_graph->eager_ms},
                          {"graph_ms", m.cuda_graph->graph_ms}};
  if (m.numerics)
    json["numerics"] = {{"bf16_rel_error", m.numerics->bf16_rel_error},
                        {"bound", m.numerics->bound}};
  if (m.throughput) {
    json["throughput"] = {{"matmul_n", m.throughput->matmul_n},
                          {"matmul_tflops", m.throughput->matmul_tflops},
                          {"attention_tflops", m.throughput->attention_tflops}};
    if (m.throughput->memory_gbps) json["throughput"]["memory_gbps"] = *m.throughput->memory_gbps;
  }
  if (m.calibration) {
    nlohmann::json forward = nlohmann::json::array();
    for (const SelfcheckForwardRate& f : m.calibration->forward)
      forward.push_back({{"precision", f.precision},
                         {"image", f.image},
                         {"threads", f.threads},
                         {"ranks", f.ranks},
                         {"ulysses", f.ulysses},
                         {"rank_elements", f.rank_elements},
                         {"gflop", f.gflop},
                         {"ms", f.ms}});
    json["calibration"] = {{"model", m.calibration->model},
                           {"setup_s", m.calibration->setup_s},
                           {"measure_s", m.calibration->measure_s},
                           {"build_ms", m.calibration->build_ms},
                           {"forward", std::move(forward)}};
  }
  if (m.launch_wall_s) json["launch_wall_s"] = *m.launch_wall_s;
  if (m.comm)
    json["comm"] = {{"world_size", m.comm->world_size},
                    {"all_to_all_gbps", m.comm->all_to_all_gbps},
                    {"all_gather_gbps", m.comm->all_gather_gbps},
                    {"latency_us", m.comm->latency_us}};
  return json;
}

SelfcheckMeasurements SelfcheckFromJson(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) Fail(where, "", "a JSON object");
  if (Text(json, "format", where) != kSelfcheckFormat)
    Fail(where, "format", fmt::format("\"{}\"", kSelfcheckFormat));
  const auto version = json.find("version");
  if (version == json.end() || !version->is_number_integer() || version->get<std::int64_t>() < 1 ||
      version->get<std::int64_t>() > kSelfcheckFormatVersion)
    Fail(where, "version", fmt::format("1 to {}", kSelfcheckFormatVersion));
  SelfcheckMeasurements m;
  m.device = Text(json, "device", where);
  m.device_name = Text(json, "device_name", where);
  m.torch = Text(json, "torch", where);
  if (json.contains("threads")) m.threads = static_cast<int>(Figure(json, "threads", "", where));
  if (const nlohmann::json* t = Object(json, "timing", where)) {
    SelfcheckTiming timing{Figure(*t, "gemm_ms", "timing.", where),
                           Figure(*t, "gemm_reference_ms", "timing.", where),
                           Figure(*t, "forward_ms", "timing.", where),
                           Figure(*t, "forward_reference_ms", "timing.", where)};
    if (t->contains("gemm_aa_pct"))
      timing.gemm_aa_pct = Figure(*t, "gemm_aa_pct", "timing.", where);
    if (t->contains("forward_aa_pct"))
      timing.forward_aa_pct = Figure(*t, "forward_aa_pct", "timing.", where);
    m.timing = timing;
  }
  if (const nlohmann::json* g = Object(json, "cuda_graph", where))
    m.cuda_graph = SelfcheckGraph{Figure(*g, "max_abs_diff", "cuda_graph.", where),
                                  Figure(*g, "eager_ms", "cuda_graph.", where),
                                  Figure(*g, "graph_ms", "cuda_graph.", where)};
  if (const nlohmann::json* n = Object(json, "numerics", where))
    m.numerics = SelfcheckNumerics{Figure(*n, "bf16_rel_error", "numerics.", where),
                                   Figure(*n, "bound", "numerics.", where)};
  if (const nlohmann::json* t = Object(json, "throughput", where)) {
    SelfcheckThroughput throughput;
    throughput.matmul_n = static_cast<int>(Figure(*t, "matmul_n", "throughput.", where));
    if (t->contains("matmul_tflops"))
      throughput.matmul_tflops = Figures(t->at("matmul_tflops"), "throughput.matmul_tflops", where);
    if (t->contains("memory_gbps"))
      throughput.memory_gbps = Figure(*t, "memory_gbps", "throughput.", where);
    if (t->contains("attention_tflops"))
      throughput.attention_tflops =
          Figures(t->at("attention_tflops"), "throughput.attention_tflops", where);
    m.throughput = throughput;
  }
  if (const nlohmann::json* c = Object(json, "comm", where))
    m.comm = SelfcheckComm{static_cast<int>(Figure(*c, "world_size", "comm.", where)),
                           Figure(*c, "all_to_all_gbps", "comm.", where),
                           Figure(*c, "all_gather_gbps", "comm.", where),
                           Figure(*c, "latency_us", "comm.", where)};
  if (const nlohmann::json* c = Object(json, "calibration", where)) {
    SelfcheckCalibration calibration;
    calibration.model = Text(*c, "model", where);
    calibration.setup_s = Figure(*c, "setup_s", "calibration.", where);
    calibration.measure_s = Figure(*c, "measure_s", "calibration.", where);
    calibration.build_ms = Figure(*c, "build_ms", "calibration.", where);
    const auto forward = c->find("forward");
    if (forward != c->end()) {
      if (!forward->is_array() || forward->size() > kMaxSelfcheckForwardRates)
        Fail(where, "calibration.forward",
             fmt::format("an array of at most {} objects", kMaxSelfcheckForwardRates));
      for (const nlohmann::json& f : *forward) {
        const std::string path = "calibration.forward[].";
        if (!f.is_object()) Fail(where, "calibration.forward[]", "an object");
        SelfcheckForwardRate rate;
        rate.precision = Text(f, "precision", where);
        if (rate.precision != "fp32" && rate.precision != "bf16" && rate.precision != "fp16")
          Fail(where, path + "precision", "fp32, bf16 or fp16");
        rate.image = Count(f, "image", path, where);
        rate.threads = Count(f, "threads", path, where);
        if (f.contains("ranks")) rate.ranks = Count(f, "ranks", path, where);  // absent: 1
        if (f.contains("ulysses")) rate.ulysses = Count(f, "ulysses", path, where);
        rate.rank_elements = Figure(f, "rank_elements", path, where);
        rate.gflop = Figure(f, "gflop", path, where);
        rate.ms = Figure(f, "ms", path, where);
        calibration.forward.push_back(rate);
      }
    }
    m.calibration = calibration;
  }
  if (json.contains("launch_wall_s")) m.launch_wall_s = Figure(json, "launch_wall_s", "", where);
  if (const nlohmann::json* s = Object(json, "skipped", where))
    for (const auto& [row, reason] : s->items()) {
      if (!reason.is_string()) Fail(where, "skipped." + row, "text");
      m.skipped[row] = reason.get<std::string>();
    }
  if (json.contains("errors")) {
    if (!json["errors"].is_array()) Fail(where, "errors", "an array of text");
    for (const auto& e : json["errors"]) {
      if (!e.is_string()) Fail(where, "errors", "an array of text");
      m.errors.push_back(e.get<std::string>());
    }
  }
  return m;
}

SelfcheckMeasurements ReadSelfcheckMeasurements(const std::filesystem::path& path) {
  const std::string text = ReadRegularFile(path, kMaxSelfcheckBytes);
  SelfcheckMeasurements m =
      SelfcheckFromJson(ParseBoundedJson(text, kMaxSelfcheckDepth, path.string()), path.string());
  if (const auto implausible = ImplausibleSelfcheckFigure(m))
    throw std::runtime_error(
        fmt::format("{}: a figure out of its physical bounds: {}", path.string(), *implausible));
  return m;
}

}  // namespace ditbench
