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

// Reads a version 1, 2 or 3 .npy file holding little-endian float32 ('<f4') in C order.
// Throws std::runtime_error naming the file and what is wrong with it.
NpyArray ReadNpy(const std::filesystem::path& path);

// Writes `data` (the product of `shape` floats) as a version 1.0 '<f4' .npy file, atomically.
void WriteNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const float* data);

}  // namespace ditbench
