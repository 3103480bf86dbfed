// The JSON header of a safetensors file (the weights a user points `model.weights` at), read as
// untrusted input and checked completely before any tensor is made: torch-free, so that the
// coordinator's tests, the sanitizer build and the fuzzers reach it. The worker's reader
// (model_zoo/weights/safetensors.h) maps the data and views each entry as a tensor.
//
// Format: 8 bytes of little-endian header length, the header (a JSON object mapping each
// tensor's name to {"dtype", "shape", "data_offsets": [begin, end]} relative to the data, plus
// an optional "__metadata__"), then the data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

// The format's own cap on the header's bytes (100 MB), and ours on its JSON values: a tensor's
// entry is about ten, so this admits 400,000 tensors (the largest real checkpoints hold a few
// thousand), and caps what the header can cost in time and memory whatever it holds.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
inline constexpr std::uint64_t kMaxSafetensorsHeaderValues = 4'000'000;

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // one of SafetensorsDtypes(): "F32", "BF16", ...
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, in bytes from the start of the data
  std::uint64_t end = 0;
};

// The dtypes this reader knows, and each one's element size in bytes (0 for an unknown name).
std::uint64_t SafetensorsElementBytes(std::string_view dtype);

// The entries of `header` (the JSON text) in name order, "__metadata__" left out. Each is
// checked: a known dtype, non-negative dimensions whose product (in 128 bits: no wrap-round)
// times the element size is exactly end - begin, offsets within `data_size`, and no two
// non-empty tensors overlapping (they would alias). The header's JSON is read with
// base/untrusted_input.h's caps (depth 4, kMaxSafetensorsHeaderValues). Throws
// std::runtime_error "<where>: tensor 'w': shape needs 8 bytes, data_offsets give 4".
std::vector<SafetensorsEntry> ParseSafetensorsHeader(std::string_view header,
                                                     std::uint64_t data_size,
                                                     const std::string& where);

}  // namespace ditbench
