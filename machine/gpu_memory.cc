#include "machine/gpu_memory.h"

#include <fmt/format.h>

#include "machine/gpu_sources.h"

namespace ditbench {
namespace {

// NVML's stable C ABI (machine/gpu_sources.cc says more): opaque handles, 0 = NVML_SUCCESS.
using NvmlHandle = void*;
struct NvmlMemoryInfo {
  unsigned long long total, free, used;  // bytes
};
constexpr unsigned kUuidSize = 96;

template <class Fn>
Fn NvmlSymbol(const DynamicLibrary& library, const char* name) {
  return reinterpret_cast<Fn>(library.Find(name));
}

bool AllDigits(const std::string& text) {
  return !text.empty() && text.size() <= 9 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

class NvmlMemoryReader final : public GpuMemoryReader {
 public:
  NvmlMemoryReader(DynamicLibrary library, std::string name, std::vector<std::string> gpus)
      : library_(std::move(library)), name_(std::move(name)), gpus_(std::move(gpus)) {}
  ~NvmlMemoryReader() override {
    if (shutdown_) shutdown_();
  }
  NvmlMemoryReader(const NvmlMemoryReader&) = delete;
  NvmlMemoryReader& operator=(const NvmlMemoryReader&) = delete;

  // Finds the functions, initialises NVML and resolves every GPU; false with why not.
  bool Open(std::string* why_not) {
    const auto init = NvmlSymbol<int (*)()>(library_, "nvmlInit_v2");
    shutdown_ = NvmlSymbol<int (*)()>(library_, "nvmlShutdown");
    error_string_ = NvmlSymbol<const char* (*)(int)>(library_, "nvmlErrorString");
    const auto count = NvmlSymbol<int (*)(unsigned*)>(library_, "nvmlDeviceGetCount_v2");
    const auto by_index =
        NvmlSymbol<int (*)(unsigned, NvmlHandle*)>(library_, "nvmlDeviceGetHandleByIndex_v2");
    const auto uuid =
        NvmlSymbol<int (*)(NvmlHandle, char*, unsigned)>(library_, "nvmlDeviceGetUUID");
    memory_ = NvmlSymbol<int (*)(NvmlHandle, NvmlMemoryInfo*)>(library_, "nvmlDeviceGetMemoryInfo");
    if (!init || !shutdown_ || !error_string_ || !count || !by_index || !uuid || !memory_) {
      shutdown_ = nullptr;
      *why_not = fmt::format("{} lacks a function ditbench needs (NVML older than 11.0?)", name_);
      return false;
    }
    if (const int status = init(); status != 0) {
      shutdown_ = nullptr;
      *why_not = fmt::format("nvmlInit failed: {} (NVML error {})", Error(status), status);
      return false;
    }
    unsigned n = 0;
    if (const int status = count(&n); status != 0) {
      *why_not = fmt::format("nvmlDeviceGetCount failed: {}", Error(status));
      return false;
    }
    std::vector<std::pair<NvmlHandle, std::string>> all;  // handle and UUID, by NVML index
    for (unsigned i = 0; i < n; ++i) {
      NvmlHandle handle = nullptr;
      char text[kUuidSize] = {};
      if (by_index(i, &handle) != 0) handle = nullptr;
      if (handle && uuid(handle, text, kUuidSize) != 0) text[0] = '\0';
      all.emplace_back(handle, std::string(text));
    }
    for (const std::string& gpu : gpus_) {
      NvmlHandle found = nullptr;
      int matches = 0;
      if (AllDigits(gpu)) {
        const unsigned long index = std::stoul(gpu);
        if (index < all.size()) found = all[index].first, matches = found ? 1 : 0;
      } else {
        for (const auto& [handle, id] : all)
          if (handle && !id.empty() && id.rfind(gpu, 0) == 0) found = handle, ++matches;
      }
      if (matches != 1) {
        *why_not = fmt::format("NVML has {} GPU(s); '{}' names {} of them", all.size(), gpu,
                               matches == 0 ? "none" : "more than one");
        return false;
      }
      handles_.push_back(found);
    }
    return true;
  }

  std::optional<std::vector<double>> UsedMb(std::string* why_not) override {
    std::vector<double> used;
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      NvmlMemoryInfo info{};
      if (const int status = memory_(handles_[i], &info); status != 0) {
        *why_not =
            fmt::format("nvmlDeviceGetMemoryInfo of GPU {} failed: {}", gpus_[i], Error(status));
        return std::nullopt;
      }
      used.push_back(static_cast<double>(info.used) / (1024.0 * 1024.0));
    }
    return used;
  }

  const std::vector<std::string>& Gpus() const override { return gpus_; }

 private:
  std::string Error(int status) const {
    const char* text = error_string_ ? error_string_(status) : nullptr;
    return text ? std::string(text) : fmt::format("error {}", status);
  }

  DynamicLibrary library_;
  std::string name_;
  std::vector<std::string> gpus_;
  std::vector<NvmlHandle> handles_;
  int (*shutdown_)() = nullptr;
  const char* (*error_string_)(int) = nullptr;
  int (*memory_)(NvmlHandle, NvmlMemoryInfo*) = nullptr;
};

}  // namespace

std::unique_ptr<GpuMemoryReader> OpenNvmlMemoryReader(const std::vector<std::string>& devices,
                                                      std::string* why_not,
                                                      const std::string& library) {
  std::string error;
  auto opened = DynamicLibrary::Open(library, &error);
  if (!opened) {
    *why_not = fmt::format("{} cannot be loaded (no NVIDIA driver here?): {}", library, error);
    return nullptr;
  }
  auto reader = std::make_unique<NvmlMemoryReader>(std::move(*opened), library, devices);
  if (!reader->Open(why_not)) return nullptr;
  return reader;
}

}  // namespace ditbench
