#include "model_zoo/weights/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>
#include <memory>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"
#include "model_zoo/shapes/safetensors_header.h"

namespace ditbench {
namespace {

struct DtypeName {
  const char* name;
  torch::ScalarType type;
};
constexpr DtypeName kDtypes[] = {
    {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16},
    {"BF16", torch::kBFloat16}, {"I64", torch::kInt64}, {"I32", torch::kInt32},
    {"I16", torch::kInt16},   {"I8", torch::kInt8},     {"U8", torch::kUInt8},
    {"BOOL", torch::kBool},
};

[[noreturn]] void Fail(const std::filesystem::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

torch::ScalarType TypeOf(const std::string& name, const std::filesystem::path& path) {
  for (const auto& d : kDtypes)
    if (name == d.name) return d.type;
  Fail(path, "unsupported dtype '" + name + "'");
}

const char* NameOf(torch::ScalarType type, const std::filesystem::path& path) {
  for (const auto& d : kDtypes)
    if (type == d.type) return d.name;
  Fail(path, std::string("cannot store dtype ") + c10::toString(type));
}

}  // namespace

NamedTensors ReadSafetensors(const std::filesystem::path& path) {
  // Mapped, not read: a 24 GB checkpoint is paged in from the page cache while it is copied
  // into the model's parameters instead of occupying 24 GB of the host's memory beside them.
  // A regular file only, opened without blocking: a FIFO named as weights never stalls the worker.
  RegularFile file = OpenRegularFile(path, std::numeric_limits<std::uint64_t>::max());
  const std::uint64_t file_size = file.size;
  void* base = file_size ? ::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
                                  file.fd.get(), 0)
                         : nullptr;
  file.fd = UniqueFd();
  if (base == MAP_FAILED) Fail(path, std::string("cannot map: ") + std::strerror(errno));
  // Private and copy-on-write: a tensor written to by mistake never reaches the file. Unmapped
  // when the last tensor viewing it is gone.
  auto mapping = std::shared_ptr<void>(base, [file_size](void* p) {
    if (p) ::munmap(p, file_size);
  });
  const auto* bytes_at = static_cast<const unsigned char*>(base);
  if (file_size < 8) Fail(path, "truncated: no header length");
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes_at[i];
  if (header_size > file_size - 8)
    Fail(path, "truncated: header of " + std::to_string(header_size) + " bytes in a file of " +
                   std::to_string(file_size));
  if (header_size > kMaxSafetensorsHeaderBytes)
    Fail(path, "header of " + std::to_string(header_size) + " bytes, more than the " +
                   std::to_string(kMaxSafetensorsHeaderBytes) + " the format allows");
  const std::uint64_t data_size = file_size - 8 - header_size;
  // Every entry checked (dtype, shape against its bytes, offsets, no overlap) before any tensor.
  const std::vector<SafetensorsEntry> entries = ParseSafetensorsHeader(
      std::string_view(reinterpret_cast<const char*>(bytes_at) + 8, header_size), data_size,
      path.string());
  unsigned char* data = static_cast<unsigned char*>(base) + 8 + header_size;

  NamedTensors tensors;
  for (const SafetensorsEntry& entry : entries) {
    const auto type = TypeOf(entry.dtype, path);
    const auto options = torch::TensorOptions().dtype(type);
    const std::uint64_t bytes = entry.end - entry.begin;
    void* at = data + entry.begin;
    torch::Tensor tensor;
    if (bytes && reinterpret_cast<std::uintptr_t>(at) % c10::elementSize(type) == 0) {
      tensor = torch::from_blob(
          at, entry.shape, [mapping](void*) {}, options);
    } else {  // empty, or misaligned for its dtype: a copy of its own
      tensor = torch::empty(entry.shape, options);
      if (bytes) std::memcpy(tensor.data_ptr(), at, bytes);
    }
    tensors.emplace(entry.name, std::move(tensor));
  }
  return tensors;
}

void WriteSafetensors(const std::filesystem::path& path, const NamedTensors& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<torch::Tensor> parts;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    auto cpu = t.detach().to(torch::kCPU).contiguous();
    const std::uint64_t bytes = cpu.numel() * cpu.element_size();
    header[name] = {{"dtype", NameOf(cpu.scalar_type(), path)},
                    {"shape", cpu.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    parts.push_back(cpu);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  auto temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) Fail(temp, "cannot create");
    unsigned char length_bytes[8];
    std::uint64_t size = text.size();
    for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(size >> (8 * i));
    out.write(reinterpret_cast<const char*>(length_bytes), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& p : parts)
      out.write(static_cast<const char*>(p.data_ptr()),
                static_cast<std::streamsize>(p.numel() * p.element_size()));
    if (!out) Fail(temp, "write failed");
  }
  // C's rename: libtorch exports its own std::filesystem symbols, which crash when called from
  // a binary that links it (seen with remove_all).
  if (std::rename(temp.c_str(), path.c_str()) != 0) Fail(path, "cannot rename " + temp.string());
}

}  // namespace ditbench
