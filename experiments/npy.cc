#include "experiments/npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "experiments/worker_contract.h"

namespace ditbench {
namespace {

std::runtime_error NpyError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

}  // namespace

NpyArray ReadNpy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path, "cannot open the output file");
  char magic[8] = {};
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw NpyError(path, "not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t header_size = 0;
  if (major == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_size = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_size = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  } else {
    throw NpyError(path, fmt::format(".npy version {} is not supported", major));
  }
  std::string header(header_size, '\0');
  in.read(header.data(), header_size);
  if (!in) throw NpyError(path, "truncated .npy header");
  if (header.find("'descr': '<f4'") == std::string::npos)
    throw NpyError(path, "expected float32 ('<f4') data");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw NpyError(path, "expected C-order data");
  std::smatch match;
  if (!std::regex_search(header, match, std::regex(R"('shape': \(([0-9, ]*)\))")))
    throw NpyError(path, "no shape in the .npy header");
  NpyArray array;
  std::int64_t count = 1;
  std::string dims = match[1];
  const std::regex number("[0-9]+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    array.shape.push_back(std::stoll(it->str()));
    count *= array.shape.back();
  }
  array.data.resize(count);
  in.read(reinterpret_cast<char*>(array.data.data()), count * sizeof(float));
  if (in.gcount() != static_cast<std::streamsize>(count * sizeof(float)))
    throw NpyError(path, fmt::format("expected {} float32 values, the file is shorter", count));
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
