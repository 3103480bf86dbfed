// The safetensors format (Hugging Face): an 8-byte little-endian header length, a JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end)}, optional "__metadata__"}, then the raw
// little-endian tensor bytes. ditbench reads diffusers' weights and reference inputs and writes
// outputs in it without Python. Only the dtypes below; anything else is refused by name.
//
// A file is untrusted input (base/untrusted_input.h): only a regular file is opened, never
// waiting on a FIFO; the header is capped at the format's 100 MB and 4 levels of nesting; shapes
// are checked against the bytes before any tensor exists, and tensors must not share bytes.
//
// Errors: std::runtime_error naming the file and what is wrong (not a regular file, truncated
// file, header not JSON or nested too deep, unknown dtype, offsets outside the data or
// overlapping, shape and byte count disagreeing).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <torch/torch.h>

namespace ditbench {

// F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL.
using NamedTensors = std::map<std::string, torch::Tensor>;

// Every tensor of `path`, on the CPU, in its stored dtype. The tensors view a private
// (copy-on-write) mapping of the file, unmapped when the last of them is destroyed.
NamedTensors ReadSafetensors(const std::filesystem::path& path);
// Writes `tensors` (any device; made contiguous on the CPU) in name order; atomically (a temp
// file renamed over `path`).
void WriteSafetensors(const std::filesystem::path& path, const NamedTensors& tensors);

}  // namespace ditbench
