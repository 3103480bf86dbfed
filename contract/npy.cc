#include "contract/npy.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/atomic_file.h"
#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "contract/worker_contract.h"

namespace ditbench {
namespace {

std::runtime_error NpyError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

// The dimensions inside "'shape': (...)" of a header, or why there are none.
std::vector<std::int64_t> ParseShape(const std::filesystem::path& path, const std::string& header) {
  const std::string key = "'shape': (";
  const auto begin = header.find(key);
  const auto end = begin == std::string::npos ? begin : header.find(')', begin);
  if (end == std::string::npos) throw NpyError(path, "no shape in the .npy header");
  std::vector<std::int64_t> shape;
  std::string_view dims(header.data() + begin + key.size(), end - begin - key.size());
  while (!dims.empty()) {
    const auto comma = dims.find(',');
    std::string_view dim = dims.substr(0, comma);
    dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
    while (!dim.empty() && dim.front() == ' ') dim.remove_prefix(1);
    while (!dim.empty() && dim.back() == ' ') dim.remove_suffix(1);
    if (dim.empty() && dims.empty()) break;  // "(5,)": the trailing comma
    std::int64_t value = -1;
    const auto [rest, error] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (error != std::errc() || rest != dim.data() + dim.size() || value < 0)
      throw NpyError(path, fmt::format("shape dimension '{}' is not a non-negative integer",
                                       std::string(dim)));
    shape.push_back(value);
  }
  return shape;
}

std::uint32_t LittleEndian(const std::string& bytes, std::size_t at, int width) {
  std::uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// ReadNpyHeader of an open file.
NpyHeader CheckedHeader(const std::filesystem::path& path, const RegularFile& file) {
  const std::string preamble = ReadRegularFileAt(file, path, 0, 12);
  if (preamble.size() < 10 || preamble.compare(0, 6, "\x93NUMPY") != 0)
    throw NpyError(path, "not a .npy file");
  const int major = static_cast<unsigned char>(preamble[6]);
  if (major < 1 || major > 3)
    throw NpyError(path, fmt::format(".npy version {} is not supported", major));
  const int width = major == 1 ? 2 : 4;
  if (preamble.size() < 8u + width) throw NpyError(path, "truncated .npy header");
  const std::uint64_t header_size = LittleEndian(preamble, 8, width);
  if (header_size > kMaxNpyHeaderBytes)
    throw NpyError(path, fmt::format("the .npy header length is {} bytes; expected at most {}",
                                     header_size, kMaxNpyHeaderBytes));
  NpyHeader parsed;
  parsed.data_offset = 8 + width + header_size;
  const std::string header = ReadRegularFileAt(file, path, 8 + width, header_size);
  if (header.size() != header_size) throw NpyError(path, "truncated .npy header");
  if (header.find("'descr': '<f4'") == std::string::npos)
    throw NpyError(path, "expected float32 ('<f4') data");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw NpyError(path, "expected C-order data");
  parsed.shape = ParseShape(path, header);
  // The claimed size is checked against the file's before anything is allocated for it.
  const std::uint64_t data_bytes = file.size - parsed.data_offset;
  std::uint64_t count = 1;
  for (const std::int64_t dim : parsed.shape)
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(dim), &count) ||
        count > data_bytes / sizeof(float))
      count = std::numeric_limits<std::uint64_t>::max();
  if (count == std::numeric_limits<std::uint64_t>::max() || count * sizeof(float) != data_bytes)
    throw NpyError(path, fmt::format("the header's shape ({}) does not match the {} bytes of "
                                     "float32 data the file holds",
                                     fmt::join(parsed.shape, ", "), data_bytes));
  parsed.count = count;
  return parsed;
}

}  // namespace

NpyHeader ReadNpyHeader(const std::filesystem::path& path) {
  return CheckedHeader(path, OpenRunFolderFile(path, kMaxNpyFileBytes));
}

NpyArray ReadNpy(const std::filesystem::path& path) {
  const RegularFile file = OpenRunFolderFile(path, kMaxNpyFileBytes);
  const NpyHeader header = CheckedHeader(path, file);
  NpyArray array;
  array.shape = header.shape;
  array.data.resize(header.count);
  const std::uint64_t bytes = header.count * sizeof(float);
  if (ReadRegularFileInto(file, path, header.data_offset, array.data.data(), bytes) != bytes)
    throw NpyError(path, fmt::format("expected {} float32 values, the file is shorter",
                                     header.count));
  return array;
}

void WriteNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const float* data) {
  std::string dims;
  std::int64_t count = 1;
  for (auto d : shape) {
    dims += std::to_string(d) + ", ";
    count *= d;
  }
  if (shape.size() > 1) dims.resize(dims.size() - 1);  // "(2, 3)"; "(5,)" keeps its comma
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>((header.size() >> 8) & 0xff);
  file += header;
  file.append(reinterpret_cast<const char*>(data), count * sizeof(float));
  WriteFileAtomically(path, file);
}

}  // namespace ditbench
