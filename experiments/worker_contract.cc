#include "experiments/worker_contract.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "experiments/trial_file_check.h"

namespace ditbench {
namespace {

nlohmann::json ReadVersionedJson(const std::filesystem::path& path, const char* format) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read", path.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
  if (!j.is_object() || j.value("format", "") != format)
    throw std::runtime_error(fmt::format("{}: expected format '{}'", path.string(), format));
  const int version = j.value("version", 0);
  if (version < 1 || version > kContractVersion)
    throw std::runtime_error(fmt::format("{}: version {} is not supported (this build reads 1 to {})",
                                         path.string(), version, kContractVersion));
  return j;
}

}  // namespace

nlohmann::json ToJson(const TrialFile& t) {
  return {{"format", "ditbench-trial"}, {"version", kContractVersion},
          {"trial_key", t.trial_key},   {"sweep", t.sweep},
          {"config", CanonicalJson(t.config)}, {"device", t.device}};
}

nlohmann::json ToJson(const RankResult& r) {
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : r.samples)
    samples.push_back({{"iteration", s.iteration}, {"stage", s.stage}, {"ms", s.ms},
                       {"warmup", s.warmup}});
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
  if (!r.metrics.empty()) j["metrics"] = r.metrics;
  return j;
}

TrialFile ReadTrialFile(const std::filesystem::path& path) {
  auto j = ReadVersionedJson(path, "ditbench-trial");
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
  return t;
}

RankResult ReadRankResult(const std::filesystem::path& path) {
  auto j = ReadVersionedJson(path, "ditbench-rank-result");
  RankResult r;
  try {
    r.rank = j.at("rank").get<int>();
    r.world_size = j.at("world_size").get<int>();
    r.status = j.at("status").get<std::string>();
    r.error = j.value("error", "");
    r.device = j.value("device", "");
    r.backend = j.value("backend", "");
    r.stop_reason = j.value("stop_reason", "");
    for (const auto& s : j.at("samples"))
      r.samples.push_back({r.rank, s.at("iteration").get<int>(), s.at("stage").get<std::string>(),
                           s.at("ms").get<double>(), s.at("warmup").get<bool>()});
    if (j.contains("peak_mem_mb") && j["peak_mem_mb"].is_number())
      r.peak_mem_mb = j["peak_mem_mb"].get<double>();
    if (j.contains("peak_reserved_mb") && j["peak_reserved_mb"].is_number())
      r.peak_reserved_mb = j["peak_reserved_mb"].get<double>();
    if (j.contains("environment")) r.environment = j["environment"];
    if (j.contains("clocks")) r.clocks = j["clocks"];
    // Optional since ditbench 0.2 (ring, PipeFusion): absent in older files.
    if (j.contains("comm_bytes_per_step") && j["comm_bytes_per_step"].is_number())
      r.comm_bytes_per_step = j["comm_bytes_per_step"].get<double>();
    r.output_file = j.value("output_file", "");
    // Optional since the `command` workload: numbers by name; anything else is refused.
    if (j.contains("metrics") && !j["metrics"].is_null()) {
      if (!j["metrics"].is_object())
        throw std::runtime_error(fmt::format("{}: 'metrics' must be an object of numbers",
                                             path.string()));
      for (const auto& [name, value] : j["metrics"].items()) {
        if (!value.is_number())
          throw std::runtime_error(fmt::format("{}: metric '{}' is not a number", path.string(),
                                               name));
        r.metrics[name] = value.get<double>();
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed rank result: {}", path.string(), e.what()));
  }
  return r;
}

void WriteFileAtomically(const std::filesystem::path& path, const std::string& text,
                         bool durable) {
  const std::filesystem::path temp = path.string() + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error(fmt::format("{}: cannot create: {}", temp.string(), std::strerror(errno)));
  std::size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("{}: write failed: {}", temp.string(), std::strerror(err)));
    }
    written += static_cast<std::size_t>(n);
  }
  if (durable) ::fsync(fd);
  ::close(fd);
  std::filesystem::rename(temp, path);
}

std::filesystem::path RankResultPath(const std::filesystem::path& run_dir, int rank) {
  return run_dir / fmt::format("rank{}.json", rank);
}

std::filesystem::path RankLogPath(const std::filesystem::path& run_dir, int rank) {
  return run_dir / fmt::format("rank{}.log", rank);
}

}  // namespace ditbench
