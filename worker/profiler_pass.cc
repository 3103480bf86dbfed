#include "worker/profiler_pass.h"

#include <fstream>
#include <set>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <zlib.h>


namespace ditbench {
namespace {

// `from` gzip-compressed into `to`.
void Gzip(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the trace", from.string()));
  gzFile out = gzopen(to.c_str(), "wb6");
  if (!out) throw std::runtime_error(fmt::format("{}: cannot create", to.string()));
  char buffer[1 << 16];
  bool ok = true;
  while (ok && in) {
    in.read(buffer, sizeof buffer);
    const auto n = static_cast<unsigned>(in.gcount());
    if (n > 0) ok = gzwrite(out, buffer, n) == static_cast<int>(n);
  }
  if (gzclose(out) != Z_OK || !ok)
    throw std::runtime_error(fmt::format("{}: cannot write the compressed trace", to.string()));
}

}  // namespace

std::string ProfileIterations(const std::function<void()>& iteration, torch::Device device,
                              int rank, const std::filesystem::path& dir) {
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  const ProfilerConfig config(ProfilerState::KINETO);
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result;
  try {
    for (int i = 0; i < kProfiledIterations; ++i) {
      iteration();
      if (device.is_cuda()) torch::cuda::synchronize(device.index());
    }
  } catch (...) {
    torch::autograd::profiler::disableProfiler();
    throw;
  }
  result = torch::autograd::profiler::disableProfiler();
  const std::string name = fmt::format("rank{}.trace.json.gz", rank);
  const std::filesystem::path plain = dir / fmt::format("rank{}.trace.json", rank);
  result->save(plain.string());
  Gzip(plain, dir / name);
  std::error_code ignored;
  std::filesystem::remove(plain, ignored);
  return name;
}

}  // namespace ditbench
