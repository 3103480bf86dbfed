#include "machine/gpu_sources.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "machine/host_info.h"

namespace ditbench {
namespace {

// NVML's stable C ABI (nvml.h; the header is not needed to build): opaque device handles,
// int return codes (0 = NVML_SUCCESS), and the PCI and memory structs as laid out there.
using NvmlDevice = void*;
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];  // "00000000:18:00.0"
};
struct NvmlMemory {
  unsigned long long total, free, used;  // bytes
};
constexpr unsigned kNvmlNameSize = 96, kNvmlUuidSize = 96, kNvmlMaxLinks = 18;

// The CUDA driver API's: CUresult (0 = CUDA_SUCCESS), CUdevice is an int, CUuuid 16 bytes.
struct CudaUuid {
  unsigned char bytes[16];
};

template <class Fn>
Fn Symbol(const DynamicLibrary& library, const char* name) {
  return reinterpret_cast<Fn>(library.Find(name));
}

std::string UuidText(const CudaUuid& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += fmt::format("{:02x}", uuid.bytes[i]);
  }
  return text;
}

// Calls nvmlShutdown when it goes out of scope.
class NvmlSession {
 public:
  explicit NvmlSession(int (*shutdown)()) : shutdown_(shutdown) {}
  ~NvmlSession() { shutdown_(); }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

 private:
  int (*shutdown_)();
};

}  // namespace

std::optional<DynamicLibrary> DynamicLibrary::Open(const std::string& name, std::string* error) {
  ::dlerror();
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    *error = why ? why : "dlopen failed";
    return std::nullopt;
  }
  return DynamicLibrary(handle);
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

void* DynamicLibrary::Find(const char* symbol) const { return ::dlsym(handle_, symbol); }

std::optional<std::vector<GpuInfo>> NvmlGpuSource::List(std::string* why_not) const {
  std::string error;
  auto library = DynamicLibrary::Open(library_, &error);
  if (!library) {
    *why_not = fmt::format("{} cannot be loaded (no NVIDIA driver here?): {}", library_, error);
    return std::nullopt;
  }
  const auto init = Symbol<int (*)()>(*library, "nvmlInit_v2");
  const auto shutdown = Symbol<int (*)()>(*library, "nvmlShutdown");
  const auto error_string = Symbol<const char* (*)(int)>(*library, "nvmlErrorString");
  const auto count = Symbol<int (*)(unsigned*)>(*library, "nvmlDeviceGetCount_v2");
  const auto by_index =
      Symbol<int (*)(unsigned, NvmlDevice*)>(*library, "nvmlDeviceGetHandleByIndex_v2");
  const auto name = Symbol<int (*)(NvmlDevice, char*, unsigned)>(*library, "nvmlDeviceGetName");
  const auto uuid = Symbol<int (*)(NvmlDevice, char*, unsigned)>(*library, "nvmlDeviceGetUUID");
  const auto memory =
      Symbol<int (*)(NvmlDevice, NvmlMemory*)>(*library, "nvmlDeviceGetMemoryInfo");
  const auto pci = Symbol<int (*)(NvmlDevice, NvmlPciInfo*)>(*library, "nvmlDeviceGetPciInfo_v3");
  // NVLink (optional: absent on old drivers; then nvidia-smi's topology is used).
  const auto link_state =
      Symbol<int (*)(NvmlDevice, unsigned, int*)>(*library, "nvmlDeviceGetNvLinkState");
  const auto link_remote = Symbol<int (*)(NvmlDevice, unsigned, NvmlPciInfo*)>(
      *library, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  if (!init || !shutdown || !error_string || !count || !by_index || !name || !uuid || !memory ||
      !pci) {
    *why_not = fmt::format("{} lacks a function ditbench needs (NVML older than 11.0?)", library_);
    return std::nullopt;
  }
  if (const int status = init(); status != 0) {
    *why_not = fmt::format("nvmlInit failed: {} (NVML error {})", error_string(status), status);
    return std::nullopt;
  }
  NvmlSession session(shutdown);
  unsigned n = 0;
  if (const int status = count(&n); status != 0) {
    *why_not = fmt::format("nvmlDeviceGetCount failed: {}", error_string(status));
    return std::nullopt;
  }
  std::vector<GpuInfo> gpus;
  for (unsigned i = 0; i < n; ++i) {
    GpuInfo gpu;
    gpu.index = static_cast<int>(i);
    NvmlDevice device = nullptr;
    if (by_index(i, &device) != 0) {  // a GPU NVML cannot open (lost, no permission): keep its place
      gpu.name = "unknown GPU";
      gpus.push_back(gpu);
      continue;
    }
    char text[std::max(kNvmlNameSize, kNvmlUuidSize)] = {};
    if (name(device, text, kNvmlNameSize) == 0) gpu.name = text;
    text[0] = '\0';
    if (uuid(device, text, kNvmlUuidSize) == 0) gpu.uuid = text;
    NvmlMemory mem{};
    if (memory(device, &mem) == 0) gpu.memory_mb = static_cast<std::int64_t>(mem.total >> 20);
    NvmlPciInfo info{};
    if (pci(device, &info) == 0) gpu.pci_bus_id = info.bus_id;
    for (unsigned link = 0; link_state && link_remote && link < kNvmlMaxLinks; ++link) {
      int active = 0;  // NVML_FEATURE_ENABLED = 1
      NvmlPciInfo far{};
      if (link_state(device, link, &active) == 0 && active == 1 &&
          link_remote(device, link, &far) == 0)
        gpu.nvlink_endpoints.push_back(far.bus_id);
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

std::optional<std::vector<GpuInfo>> CudaDriverGpuSource::List(std::string* why_not) const {
  std::string error;
  auto library = DynamicLibrary::Open(library_, &error);
  if (!library) {
    *why_not = fmt::format("{} cannot be loaded (no NVIDIA driver here?): {}", library_, error);
    return std::nullopt;
  }
  const auto init = Symbol<int (*)(unsigned)>(*library, "cuInit");
  const auto error_string = Symbol<int (*)(int, const char**)>(*library, "cuGetErrorString");
  const auto count = Symbol<int (*)(int*)>(*library, "cuDeviceGetCount");
  const auto get = Symbol<int (*)(int*, int)>(*library, "cuDeviceGet");
  const auto name = Symbol<int (*)(char*, int, int)>(*library, "cuDeviceGetName");
  const auto memory = Symbol<int (*)(std::size_t*, int)>(*library, "cuDeviceTotalMem_v2");
  const auto uuid = Symbol<int (*)(CudaUuid*, int)>(*library, "cuDeviceGetUuid");
  const auto pci = Symbol<int (*)(char*, int, int)>(*library, "cuDeviceGetPCIBusId");
  if (!init || !error_string || !count || !get || !name || !memory || !uuid || !pci) {
    *why_not = fmt::format("{} lacks a function ditbench needs", library_);
    return std::nullopt;
  }
  auto describe = [&](int status) {
    const char* text = nullptr;
    if (error_string(status, &text) != 0 || text == nullptr) {
      // A stub library (the toolkit's, for linking) does not know its own error strings.
      text = status == 34    ? "the CUDA driver is a stub library (no driver installed)"
             : status == 35  ? "the driver is older than this CUDA"
             : status == 100 ? "no CUDA-capable device is detected"
                             : "unknown error";
    }
    return fmt::format("{} (CUDA error {})", text, status);
  };
  if (const int status = init(0); status != 0) {
    *why_not = "cuInit failed: " + describe(status);
    return std::nullopt;
  }
  int n = 0;
  if (const int status = count(&n); status != 0) {
    *why_not = "cuDeviceGetCount failed: " + describe(status);
    return std::nullopt;
  }
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < n; ++i) {
    GpuInfo gpu;
    int device = 0;
    if (get(&device, i) != 0) continue;
    char text[128] = {};
    if (name(text, sizeof(text), device) == 0) gpu.name = text;
    std::size_t bytes = 0;
    if (memory(&bytes, device) == 0) gpu.memory_mb = static_cast<std::int64_t>(bytes >> 20);
    CudaUuid id{};
    if (uuid(&id, device) == 0) gpu.uuid = UuidText(id);
    text[0] = '\0';
    if (pci(text, sizeof(text), device) == 0) gpu.pci_bus_id = text;
    gpus.push_back(gpu);
  }
  std::stable_sort(gpus.begin(), gpus.end(), [](const GpuInfo& a, const GpuInfo& b) {
    return a.pci_bus_id < b.pci_bus_id;
  });
  const bool renumbered = std::getenv("CUDA_VISIBLE_DEVICES") != nullptr;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    gpus[i].index = renumbered ? -1 : static_cast<int>(i);
  return gpus;
}

std::optional<std::vector<GpuInfo>> NvidiaSmiGpuSource::List(std::string* why_not) const {
  std::vector<GpuInfo> gpus;
  for (const auto& line :
       CommandOutputLines({program_, "--query-gpu=index,uuid,name,memory.total,pci.bus_id",
                           "--format=csv,noheader,nounits"}))
    if (auto gpu = ParseNvidiaSmiQueryLine(line)) gpus.push_back(*gpu);
  if (gpus.empty()) {
    *why_not = fmt::format("`{} --query-gpu` listed no GPU (not installed, or no driver)",
                           program_);
    return std::nullopt;
  }
  return gpus;
}

}  // namespace ditbench
