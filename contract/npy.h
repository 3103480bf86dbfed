// Float32 arrays as NumPy .npy files: how a worker hands its final output to the coordinator
// (runner/output_error.h), and readable by anyone with numpy (`numpy.load`). Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace ditbench {

// A float32 array in C order.
struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> data;
};

// The most a .npy file may hold: its header (numpy itself writes fewer than 200 bytes) and
// the whole file (64M floats: a large batch of latents).
inline constexpr std::uint64_t kMaxNpyHeaderBytes = 64 * 1024;
inline constexpr std::uint64_t kMaxNpyFileBytes = 256ull << 20;

// What a .npy header says: the shape, and where the data starts.
struct NpyHeader {
  std::vector<std::int64_t> shape;
  std::uint64_t data_offset = 0;
  std::uint64_t count = 0;  // the product of `shape`
};

// Reads and checks the header of a version 1, 2 or 3 .npy file holding little-endian float32
// ('<f4') in C order, without reading the data: the file must be a regular file (never a FIFO;
// base/untrusted_input.h) of at most kMaxNpyFileBytes, and its size must be exactly the
// header plus the 4 * count bytes the shape claims. Throws std::runtime_error naming the file
// and what is wrong with it.
NpyHeader ReadNpyHeader(const std::filesystem::path& path);

// ReadNpyHeader's checks, then the data: memory is allocated only for data the file holds.
NpyArray ReadNpy(const std::filesystem::path& path);

// Writes `data` (the product of `shape` floats) as a version 1.0 '<f4' .npy file, atomically.
void WriteNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const float* data);

}  // namespace ditbench
