#include "runner/engine_gpu_memory.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "base/terminal_text.h"

namespace ditbench {
namespace {

std::vector<std::string> SplitDevices(const std::string& visible) {
  std::vector<std::string> devices;
  std::size_t begin = 0;
  while (begin <= visible.size()) {
    const std::size_t comma = std::min(visible.find(',', begin), visible.size());
    if (comma > begin) devices.push_back(visible.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return devices;
}

double Largest(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

}  // namespace

EngineGpuMemory::EngineGpuMemory(std::unique_ptr<GpuMemoryReader> reader, std::string why_not,
                                 double dirty_mb)
    : reader_(std::move(reader)), why_not_(std::move(why_not)), dirty_mb_(dirty_mb) {}

EngineGpuMemory::~EngineGpuMemory() { StopSampling(); }

void EngineGpuMemory::CheckClean() {
  if (!reader_) return;
  std::string why;
  const auto used = reader_->UsedMb(&why);
  if (!used)
    throw std::runtime_error(
        fmt::format("cannot read the GPUs' memory before the server "
                    "starts: {}",
                    OneLine(why)));
  before_ = *used;
  for (std::size_t i = 0; i < before_.size(); ++i)
    if (before_[i] > dirty_mb_)
      throw std::runtime_error(fmt::format(
          "GPU {} holds {:.0f} MiB before the server starts, more than engine.dirty_gpu_mb "
          "{:.0f}: another program's memory (an earlier run's server?) would be counted as "
          "this server's; expected a GPU that holds at most {:.0f} MiB (nvidia-smi lists who "
          "holds it)",
          OneLine(reader_->Gpus()[i]), before_[i], dirty_mb_, dirty_mb_));
}

void EngineGpuMemory::Sample() {
  std::string why;
  const auto used = reader_->UsedMb(&why);
  std::lock_guard lock(mutex_);
  if (!used) {
    if (read_error_.empty()) read_error_ = OneLine(why);
    return;
  }
  if (peak_.empty()) peak_.assign(used->size(), 0);
  for (std::size_t i = 0; i < used->size() && i < peak_.size(); ++i)
    peak_[i] = std::max(peak_[i], (*used)[i]);
  ++samples_;
}

void EngineGpuMemory::StartSampling() {
  if (!reader_ || sampler_.joinable()) return;
  std::string why;
  if (const auto used = reader_->UsedMb(&why))
    rest_ = *used;
  else
    read_error_ = OneLine(why);
  Sample();
  sampler_ = std::thread([this] { Loop(); });
}

void EngineGpuMemory::Loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(kEngineGpuMemoryPeriodMs));
    if (stop_) break;
    lock.unlock();
    Sample();
    lock.lock();
  }
}

void EngineGpuMemory::StopSampling() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

void EngineGpuMemory::Record(RankResult& result) const {
  if (!reader_) {
    result.environment["engine_gpu_memory"] = "not measured: " + why_not_;
    return;
  }
  std::lock_guard lock(mutex_);
  nlohmann::json memory = {
      {"source", "nvml"},
      {"gpus", reader_->Gpus()},
      {"what", fmt::format("whole-GPU used memory (every process's), MiB; peak over a sample "
                           "every {} ms from ready to the last request",
                           kEngineGpuMemoryPeriodMs)},
      {"samples", samples_}};
  if (!before_.empty()) memory["before_mb"] = before_;
  if (!rest_.empty()) {
    memory["rest_mb"] = rest_;
    result.metrics["server_gpu_mem_rest_mb"] = Largest(rest_);
  }
  if (!peak_.empty()) {
    memory["peak_mb"] = peak_;
    result.metrics["server_gpu_mem_peak_mb"] = Largest(peak_);
  }
  if (!read_error_.empty()) memory["read_error"] = read_error_;
  result.environment["engine_gpu_memory"] = std::move(memory);
}

std::unique_ptr<EngineGpuMemory> WatchEngineGpuMemory(const TrialFile& trial) {
  const double dirty_mb = trial.config.engine.dirty_gpu_mb;
  const auto unmeasured = [&](std::string why) {
    return std::make_unique<EngineGpuMemory>(nullptr, std::move(why), dirty_mb);
  };
  if (trial.device != "cuda") return unmeasured("a CPU trial");
  if (!trial.config.engine.url.empty())
    return unmeasured("the server is attached (url): its GPUs are not the trial's to read");
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> devices = SplitDevices(visible ? visible : "");
  if (devices.empty()) return unmeasured("CUDA_VISIBLE_DEVICES names no GPU");
  std::string why;
  auto reader = OpenNvmlMemoryReader(devices, &why);
  if (!reader) return unmeasured(OneLine(why));
  return std::make_unique<EngineGpuMemory>(std::move(reader), "", dirty_mb);
}

}  // namespace ditbench
