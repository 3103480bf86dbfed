#include "contract/worker_contract.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "contract/rank_file_fields.h"
#include "contract/trial_file_check.h"
#include "experiments/resolution.h"
#include "experiments/trial_kind.h"

namespace ditbench {
namespace {

// The top-level fields of a rank file this build reads (ReadRankResult); others are dropped.
// clang-format off
const std::vector<std::string> kRankFileFields = {
    "format", "version", "rank", "world_size", "status", "error", "device", "backend",
    "stop_reason", "samples", "peak_mem_mb", "peak_reserved_mb", "environment", "clocks",
    "output_file", "trace_file", "comm_bytes_per_step", "energy", "metrics", "steps", "latent_shape",
    "requests", "serve_start_monotonic_s"};
// clang-format on

nlohmann::json ReadVersionedJson(const std::filesystem::path& path, const char* format,
                                 std::uint64_t max_bytes, const JsonLimits& limits) {
  // In the run folder: a regular file, no link (base/run_folder_file.h); never blocks.
  const std::string text = ReadRunFolderFile(path, max_bytes);
  const nlohmann::json j = ParseBoundedJson(text, limits, path.string());
  if (!j.is_object() || !j.contains("format") || j["format"] != format)
    throw std::runtime_error(fmt::format("{}: expected format '{}'", path.string(), format));
  const nlohmann::json version = j.value("version", nlohmann::json());
  if (!version.is_number_integer() || version < 1 || version > kContractVersion)
    throw std::runtime_error(fmt::format("{}: version {} is not supported (this build reads 1 to {})",
                                         path.string(), version.dump(), kContractVersion));
  return j;
}

// A kernel's or a layer form's name: short, of [a-z0-9_+], so that it reaches a terminal and a
// report as it is.
bool KernelText(const nlohmann::json& value) {
  if (!value.is_string()) return false;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.size() > 64) return false;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+')) return false;
  return true;
}

// Optional since the attention axis and FP8 layers: what each step ran, steps in order.
std::vector<StepKernels> ReadSteps(const RankFileFields& field, const nlohmann::json& j) {
  std::vector<StepKernels> steps;
  if (!j.contains("steps") || j["steps"].is_null()) return steps;
  const nlohmann::json& list = j["steps"];
  if (!list.is_array() || list.size() > static_cast<std::size_t>(kMaxSteps))
    field.Fail("steps", list, fmt::format("a list of at most {} steps", kMaxSteps));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    const std::string key = fmt::format("steps[{}]", i);
    if (!item.is_object() || !item.contains("step") || !item["step"].is_number_integer() ||
        item["step"].get<std::int64_t>() != static_cast<std::int64_t>(i))
      field.Fail(key, item, fmt::format("{{\"step\": {}, \"attention\", \"linear\"}}", i));
    for (const char* part : {"attention", "linear"})
      if (!KernelText(item.value(part, nlohmann::json())))
        field.Fail(key + "." + part, item.value(part, nlohmann::json()),
                   "a name of at most 64 characters of a-z, 0-9, '_' and '+'");
    const nlohmann::json reused = item.value("reused", nlohmann::json(false));
    if (!reused.is_boolean()) field.Fail(key + ".reused", reused, "true or false");
    const nlohmann::json expert = item.value("expert", nlohmann::json(0));
    if (!expert.is_number_integer() || expert.get<std::int64_t>() < 0 ||
        expert.get<std::int64_t>() >= kMaxExperts)
      field.Fail(key + ".expert", expert,
                 fmt::format("an expert's index, 0 to {}", kMaxExperts - 1));
    steps.push_back({static_cast<int>(i), item["attention"].get<std::string>(),
                     item["linear"].get<std::string>(), reused.get<bool>(),
                     static_cast<int>(expert.get<std::int64_t>())});
  }
  return steps;
}

// Optional since the computed shape's check: 4 or 5 sizes, each from 1 to 2^31 - 1.
std::vector<std::int64_t> ReadLatentShape(const RankFileFields& field, const nlohmann::json& j) {
  std::vector<std::int64_t> shape;
  if (!j.contains("latent_shape") || j["latent_shape"].is_null()) return shape;
  const nlohmann::json& list = j["latent_shape"];
  const char* expected = "a list of 4 or 5 sizes from 1 to 2147483647";
  if (!list.is_array() || list.size() < 4 || list.size() > 5)
    field.Fail("latent_shape", list, expected);
  for (const nlohmann::json& size : list) {
    if (!size.is_number_integer() || size.get<std::int64_t>() < 1 ||
        size.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      field.Fail("latent_shape", list, expected);
    shape.push_back(size.get<std::int64_t>());
  }
  return shape;
}

// Optional since serving trials: the requests a replica's leader served.
std::vector<RequestRecord> ReadRequests(const RankFileFields& field, const nlohmann::json& j) {
  std::vector<RequestRecord> requests;
  if (!j.contains("requests") || j["requests"].is_null()) return requests;
  const nlohmann::json& list = j["requests"];
  if (!list.is_array() || list.size() > static_cast<std::size_t>(kMaxServeRequests))
    field.Fail("requests", list, fmt::format("a list of at most {} requests", kMaxServeRequests));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    const std::string key = fmt::format("requests[{}]", i);
    if (!item.is_object())
      field.Fail(key, item, "{\"index\", \"shape\", \"replica\", \"arrival_ms\", ...}");
    RequestRecord r;
    for (auto [name, value, high] : {std::tuple{"index", &r.index, kMaxServeRequests - 1},
                                     std::tuple{"shape", &r.shape, kMaxServeRequests - 1},
                                     std::tuple{"replica", &r.replica, kMaxWorldSize - 1}}) {
      const nlohmann::json v = item.value(name, nlohmann::json());
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > high)
        field.Fail(key + "." + name, v, fmt::format("an integer from 0 to {}", high));
      *value = static_cast<int>(v.get<std::int64_t>());
    }
    // A time from 0; the latency alone (the SLO's unit, a divisor) at least an iteration's least.
    for (auto [name, value, low] :
         {std::tuple{"arrival_ms", &r.arrival_ms, 0.0}, std::tuple{"start_ms", &r.start_ms, 0.0},
          std::tuple{"end_ms", &r.end_ms, 0.0},
          std::tuple{"isolated_ms", &r.isolated_ms, kMinIterationMs}}) {
      const nlohmann::json v = item.value(name, nlohmann::json());
      if (!v.is_number() || !(v.get<double>() >= low && v.get<double>() <= kMaxServeMs))
        field.Fail(key + "." + name, v, fmt::format("ms from {:g} to {:g}", low, kMaxServeMs));
      *value = v.get<double>();
    }
    if (item.contains("failed")) {
      if (!item["failed"].is_boolean())
        field.Fail(key + ".failed", item["failed"], "true or false");
      r.failed = item["failed"].get<bool>();
    }
    requests.push_back(r);
  }
  return requests;
}

// A served trial's "requests" (TrialFile::requests), every field checked: untrusted, as the
// file may have been edited or written by anything. Throws the one-line message of `field`.
RequestList ReadRequestList(const RankFileFields& field, const nlohmann::json& j) {
  static const nlohmann::json kAbsent;
  const nlohmann::json& r = field.Object(j, "requests");
  const auto array = [&](const char* key, std::size_t most) -> const nlohmann::json& {
    const nlohmann::json& a = r.contains(key) ? r[key] : kAbsent;
    if (!a.is_array() || a.empty() || a.size() > most)
      field.Fail(fmt::format("requests.{}", key), a, fmt::format("an array of 1 to {}", most));
    return a;
  };
  RequestList list;
  const nlohmann::json& shapes = array("shapes", kMaxRequestShapes);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string where = fmt::format("requests.shapes[{}]", i);
    if (!shapes[i].is_object()) field.Fail(where, shapes[i], "an object");
    const nlohmann::json& s = shapes[i];
    const auto integer = [&](const char* key, int low, int high) {
      const nlohmann::json& v = s.contains(key) ? s[key] : kAbsent;
      if (!v.is_number_integer() || v.get<std::int64_t>() < low || v.get<std::int64_t>() > high)
        field.Fail(fmt::format("{}.{}", where, key), v,
                   fmt::format("an integer from {} to {}", low, high));
      return static_cast<int>(v.get<std::int64_t>());
    };
    RequestShape shape;
    shape.width = integer("width", kMinResolutionSide, kMaxResolutionSide);
    shape.height = integer("height", kMinResolutionSide, kMaxResolutionSide);
    shape.frames = integer("frames", 0, kMaxRequestFrames);
    shape.steps = integer("steps", 1, kMaxRequestSteps);
    shape.weight = 1;
    list.shapes.push_back(shape);
  }
  const nlohmann::json& arrivals = array("arrival_s", kMaxServeRequests);
  const nlohmann::json& indices = array("shape", kMaxServeRequests);
  if (indices.size() != arrivals.size())
    field.Fail("requests.shape", nlohmann::json(indices.size()),
               fmt::format("as many entries as requests.arrival_s ({})", arrivals.size()));
  double last = 0;
  list.requests.reserve(arrivals.size());
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const nlohmann::json& a = arrivals[i];
    if (!a.is_number() || !(a.get<double>() >= last && a.get<double>() <= kMaxServeSeconds))
      field.Fail(
          fmt::format("requests.arrival_s[{}]", i), a,
          fmt::format("seconds from {:g} (the arrival before) to {:g}", last, kMaxServeSeconds));
    last = a.get<double>();
    const nlohmann::json& k = indices[i];
    if (!k.is_number_integer() || k.get<std::int64_t>() < 0 ||
        k.get<std::int64_t>() >= static_cast<std::int64_t>(list.shapes.size()))
      field.Fail(fmt::format("requests.shape[{}]", i), k,
                 fmt::format("an index into requests.shapes, 0 to {}", list.shapes.size() - 1));
    list.requests.push_back({static_cast<int>(i), last, static_cast<int>(k.get<std::int64_t>())});
  }
  return list;
}

nlohmann::json RequestListJson(const RequestList& list) {
  nlohmann::json shapes = nlohmann::json::array(), arrivals = nlohmann::json::array(),
                 indices = nlohmann::json::array();
  for (const RequestShape& s : list.shapes)
    shapes.push_back(
        {{"width", s.width}, {"height", s.height}, {"frames", s.frames}, {"steps", s.steps}});
  for (const Request& q : list.requests) {
    arrivals.push_back(q.arrival_s);
    indices.push_back(q.shape);
  }
  return {{"shapes", shapes}, {"arrival_s", arrivals}, {"shape", indices}};
}

}  // namespace

nlohmann::json ToJson(const TrialFile& t) {
  nlohmann::json j = {{"format", "ditbench-trial"},        {"version", kContractVersion},
                      {"trial_key", t.trial_key},          {"sweep", t.sweep},
                      {"config", CanonicalJson(t.config)}, {"device", t.device}};
  if (KindRow(KindOf(t.config)).has_requests) j["requests"] = RequestListJson(t.requests);
  return j;
}

nlohmann::json ToJson(const RankResult& r) {
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : r.samples) {
    samples.push_back({{"iteration", s.iteration}, {"stage", s.stage}, {"ms", s.ms},
                       {"warmup", s.warmup}});
    if (s.reused) samples.back()["reused"] = true;  // written only when set: most never are
  }
  nlohmann::json j = {{"format", "ditbench-rank-result"},
                      {"version", kContractVersion},
                      {"rank", r.rank},
                      {"world_size", r.world_size},
                      {"status", r.status},
                      {"error", r.error},
                      {"device", r.device},
                      {"backend", r.backend},
                      {"stop_reason", r.stop_reason},
                      {"samples", samples},
                      {"environment", r.environment},
                      {"clocks", r.clocks}};
  j["peak_mem_mb"] = r.peak_mem_mb ? nlohmann::json(*r.peak_mem_mb) : nlohmann::json();
  j["peak_reserved_mb"] =
      r.peak_reserved_mb ? nlohmann::json(*r.peak_reserved_mb) : nlohmann::json();
  j["comm_bytes_per_step"] =
      r.comm_bytes_per_step ? nlohmann::json(*r.comm_bytes_per_step) : nlohmann::json();
  j["output_file"] = r.output_file;
  if (!r.trace_file.empty()) j["trace_file"] = r.trace_file;
  if (!r.metrics.empty()) j["metrics"] = r.metrics;
  for (const auto& [name, declared] : r.metric_declarations) {
    if (!r.metrics.contains(name)) continue;
    j["metrics"][name] = {{"value", r.metrics.at(name)}};
    if (!declared.unit.empty()) j["metrics"][name]["unit"] = declared.unit;
    if (!declared.better.empty()) j["metrics"][name]["better"] = declared.better;
  }
  if (!r.steps.empty()) {
    j["steps"] = nlohmann::json::array();
    for (const StepKernels& step : r.steps) {
      j["steps"].push_back({{"step", step.step},
                            {"attention", step.attention},
                            {"linear", step.linear},
                            {"reused", step.reused}});
      if (step.expert != 0) j["steps"].back()["expert"] = step.expert;  // models of experts only
    }
  }
  if (!r.latent_shape.empty()) j["latent_shape"] = r.latent_shape;
  if (!r.requests.empty()) {
    j["requests"] = nlohmann::json::array();
    for (const RequestRecord& q : r.requests) {
      j["requests"].push_back({{"index", q.index},
                               {"shape", q.shape},
                               {"replica", q.replica},
                               {"arrival_ms", q.arrival_ms},
                               {"start_ms", q.start_ms},
                               {"end_ms", q.end_ms},
                               {"isolated_ms", q.isolated_ms}});
      if (q.failed) j["requests"].back()["failed"] = true;
    }
  }
  if (r.serve_start_monotonic_s) j["serve_start_monotonic_s"] = *r.serve_start_monotonic_s;
  if (r.energy)
    j["energy"] = {{"joules", r.energy->joules}, {"window_ms", r.energy->window_ms}};
  else if (!r.energy_unavailable.empty())
    j["energy"] = {{"unavailable", r.energy_unavailable}};
  return j;
}

TrialFile ReadTrialFile(const std::filesystem::path& path) {
  JsonLimits limits;
  limits.max_depth = kMaxJsonDepth;
  limits.max_values = kMaxTrialFileValues;
  auto j = ReadVersionedJson(path, "ditbench-trial", kMaxTrialFileBytes, limits);
  if (auto problem = TrialFileProblem(j))
    throw std::runtime_error(fmt::format("{}: {}", path.string(), *problem));
  TrialFile t;
  try {
    t.trial_key = j.at("trial_key").get<std::string>();
    t.sweep = j.value("sweep", "");
    t.device = j.value("device", "cpu");
    t.config = TrialConfigFromJson(j.at("config"));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
  const RankFileFields field(path);
  if (KindRow(KindOf(t.config)).has_requests)
    t.requests = ReadRequestList(field, j);
  else if (j.contains("requests"))
    field.Fail("requests", j["requests"],
               fmt::format("no requests: the trial is {}", TrialKindName(KindOf(t.config))));
  return t;
}

RequestList ReadTrialRequests(const std::filesystem::path& path) {
  TrialFile t = ReadTrialFile(path);
  if (!KindRow(KindOf(t.config)).has_requests)
    throw std::runtime_error(fmt::format("{}: 'config' is a {} trial's; expected one with requests",
                                         path.string(), TrialKindName(KindOf(t.config))));
  return std::move(t.requests);
}

RankResult ReadRankResult(const std::filesystem::path& path,
                          const std::function<bool()>& cancelled) {
  const RankFileFields field(path);
  // The samples, most of a rank file, are checked as they are read and never built as a whole
  // document: reading costs a few times the file, not the tens of times a tree of small
  // objects would.
  SampleChecker samples(field, 0);
  bool streamed = false;
  JsonLimits limits;
  limits.max_depth = kMaxJsonDepth;
  limits.max_values = kMaxRankFileValues;
  limits.keep_top_level_keys = kRankFileFields;
  limits.cancelled = cancelled;
  limits.streamed_array_key = "samples";
  limits.on_streamed_element = [&](nlohmann::json&& sample, std::uint64_t index) {
    streamed = true;
    samples.Add(sample, index);
  };
  const nlohmann::json j =
      ReadVersionedJson(path, "ditbench-rank-result", kMaxRankFileBytes, limits);
  RankResult r;
  r.rank = static_cast<int>(field.Integer(j, "rank", 0, kMaxWorldSize - 1));
  r.world_size = static_cast<int>(field.Integer(j, "world_size", 1, kMaxWorldSize));
  r.status = field.Text(j, "status");
  r.error = field.OptionalText(j, "error");
  r.device = field.OptionalText(j, "device");
  r.backend = field.OptionalText(j, "backend");
  r.stop_reason = field.OptionalText(j, "stop_reason");
  // Not streamed when absent, not an array, or empty: then checked (and refused) as a field.
  if (streamed && !j["samples"].empty())
    field.Fail("samples", j["samples"], "one 'samples' array (the file has two)");
  r.samples = streamed ? samples.Take() : field.Samples(j, r.rank);
  for (Sample& sample : r.samples) sample.rank = r.rank;
  r.peak_mem_mb = field.OptionalNumber(j, "peak_mem_mb", kMaxMemoryMb);
  r.peak_reserved_mb = field.OptionalNumber(j, "peak_reserved_mb", kMaxMemoryMb);
  // Optional since ditbench 0.2 (ring, PipeFusion): absent in older files.
  r.comm_bytes_per_step = field.OptionalNumber(j, "comm_bytes_per_step", kMaxCommBytes);
  if (j.contains("environment") && !j["environment"].is_null())
    r.environment = field.Object(j, "environment");
  r.clocks = field.Clocks(j);
  r.output_file = field.OptionalText(j, "output_file");
  // Optional since `profile: trace`: a file name in the run folder, never a path out of it.
  r.trace_file = field.OptionalText(j, "trace_file");
  if (!r.trace_file.empty() &&
      (r.trace_file.find('/') != std::string::npos || r.trace_file == "." ||
       r.trace_file == ".." || r.trace_file.size() > 255))
    field.Fail("trace_file", j["trace_file"], "a file name in the run folder (no '/')");
  // Optional since energy per image: checked against this rank's own timed iterations.
  field.Energy(j, r.samples, r.energy, r.energy_unavailable);
  // Optional since the `command` workload: numbers by name, or (since the metric table) a
  // number with its declared unit and better direction; anything else is refused.
  if (j.contains("metrics") && !j["metrics"].is_null()) {
    for (const auto& [name, value] : field.Object(j, "metrics").items()) {
      if (value.is_object()) {
        const std::string key = "metrics." + name;
        if (!value.contains("value") || !value["value"].is_number())
          field.Fail(key + ".value", value.value("value", nlohmann::json()), "a number");
        MetricDeclaration& declared = r.metric_declarations[name];
        for (auto [text, part] :
             {std::pair{&declared.unit, "unit"}, std::pair{&declared.better, "better"}}) {
          if (!value.contains(part) || value[part].is_null()) continue;
          if (!value[part].is_string()) field.Fail(key + "." + part, value[part], "text");
          *text = value[part].get<std::string>();
        }
        r.metrics[name] = value["value"].get<double>();
        continue;
      }
      if (!value.is_number())
        field.Fail("metrics." + name, value, "a number or {\"value\", \"unit\", \"better\"}");
      r.metrics[name] = value.get<double>();  // finite: the parser refuses inf and nan
    }
  }
  r.steps = ReadSteps(field, j);
  r.latent_shape = ReadLatentShape(field, j);
  r.requests = ReadRequests(field, j);
  // Optional since busy requests: a number (the parser refuses inf and nan) from 0.
  r.serve_start_monotonic_s =
      field.OptionalNumber(j, "serve_start_monotonic_s", kMaxHostMonotonicS);
  return r;
}

std::filesystem::path RankResultPath(const std::filesystem::path& run_dir, int rank) {
  return run_dir / fmt::format("rank{}.json", rank);
}

std::filesystem::path RankLogPath(const std::filesystem::path& run_dir, int rank) {
  return run_dir / fmt::format("rank{}.log", rank);
}

}  // namespace ditbench
