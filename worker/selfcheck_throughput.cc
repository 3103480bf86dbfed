// The throughput and communication sections of the selfcheck (worker/selfcheck.h).
#include <functional>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "metrics/measurement.h"
#include "stats/stats.h"
#include "worker/selfcheck.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

double MedianMs(torch::Device device, RankGroup& group, int warmup, int iterations,
                const std::function<void()>& work) {
  std::vector<double> ms = DitbenchTimesMs(device, group, warmup, iterations, work);
  if (ms.empty()) throw std::runtime_error("no timed iterations");
  return Summarize(std::move(ms)).median;
}

double MedianMs(torch::Device device, int warmup, int iterations,
                const std::function<void()>& work) {
  SingleRankGroup one;
  return MedianMs(device, one, warmup, iterations, work);
}

// SDPA's backends, called directly so that each one runs or says why not (the dispatcher
// would silently fall back to another). Inputs [B, H, N, d].
struct SdpaKernel {
  const char* name;
  bool cuda_only;
  std::function<void(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)> run;
};

const std::vector<SdpaKernel>& SdpaKernels() {
  static const std::vector<SdpaKernel> backends = {
      {"math", false,
       [](const auto& q, const auto& k, const auto& v) {
         at::_scaled_dot_product_attention_math(q, k, v);
       }},
      {"flash", true,
       [](const auto& q, const auto& k, const auto& v) {
         at::_scaled_dot_product_flash_attention(q, k, v);
       }},
      {"efficient", true,
       [](const auto& q, const auto& k, const auto& v) {
         at::_scaled_dot_product_efficient_attention(q, k, v, std::nullopt, false);
       }},
      {"cudnn", true,
       [](const auto& q, const auto& k, const auto& v) {
         at::_scaled_dot_product_cudnn_attention(q, k, v, std::nullopt, false);
       }},
  };
  return backends;
}

// The first line of an error, for a `skipped` reason.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

SelfcheckThroughput MeasureThroughput(torch::Device device, int warmup, int iterations,
                                      std::map<std::string, std::string>& skipped) {
  const bool cuda = device.is_cuda();
  SelfcheckThroughput t;
  // Square matmuls: 8192^3 on a GPU (about 1 ms in bf16 on an H100), 1024^3 on CPU (tens of ms
  // in fp32 on two cores). fp32 with TF32 off (MeasureSelfcheck).
  t.matmul_n = cuda ? 8192 : 1024;
  const int64_t n = t.matmul_n;
  for (auto [name, dtype] : {std::pair{"fp32", torch::kFloat32}, {"bf16", torch::kBFloat16}}) {
    auto options = torch::TensorOptions().dtype(dtype).device(device);
    auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
    auto c = torch::empty({n, n}, options);
    const double ms = MedianMs(device, warmup, iterations, [&] { at::mm_out(c, a, b); });
    t.matmul_tflops[name] = 2.0 * double(n) * double(n) * double(n) / (ms * 1e-3) / 1e12;
  }
  {
    // A copy far larger than any cache: 1 GiB on a GPU, 64 MiB on CPU; read plus write.
    const int64_t bytes = cuda ? (int64_t{1} << 30) : (int64_t{64} << 20);
    auto options = torch::TensorOptions().dtype(torch::kUInt8).device(device);
    auto from = torch::ones({bytes}, options), to = torch::empty({bytes}, options);
    const double ms = MedianMs(device, warmup, iterations, [&] { to.copy_(from); });
    t.memory_gbps = 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
  }
  // Attention: bf16 [2, 16, 4096, 128] on a GPU, fp32 [1, 4, 1024, 64] on CPU; 4 B H N^2 d
  // FLOPs (QK^T and PV).
  const int64_t b = cuda ? 2 : 1, h = cuda ? 16 : 4, tokens = cuda ? 4096 : 1024,
                d = cuda ? 128 : 64;
  auto options =
      torch::TensorOptions().dtype(cuda ? torch::kBFloat16 : torch::kFloat32).device(device);
  auto q = torch::randn({b, h, tokens, d}, options), k = torch::randn({b, h, tokens, d}, options),
       v = torch::randn({b, h, tokens, d}, options);
  const double flops = 4.0 * double(b * h) * double(tokens) * double(tokens) * double(d);
  for (const SdpaKernel& backend : SdpaKernels()) {
    const std::string row = std::string("attention.") + backend.name;
    if (backend.cuda_only && !cuda) {
      skipped[row] = "no CUDA device";
      continue;
    }
    try {
      const double ms = MedianMs(device, warmup, iterations, [&] { backend.run(q, k, v); });
      t.attention_tflops[backend.name] = flops / (ms * 1e-3) / 1e12;
    } catch (const c10::Error& e) {
      skipped[row] = FirstLine(e.what_without_backtrace());
    }
  }
  return t;
}

SelfcheckComm MeasureComm(torch::Device device, const RankSubgroup& world, int warmup,
                          int iterations) {
  ProcessRankGroup group(world, device);
  const double ranks = world.size;
  auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  // Bus bandwidth as nccl-tests define it: the algorithm bandwidth (bytes / time) times
  // (n - 1) / n, what each link carries; 16 MiB per rank sent (all-to-all) or gathered.
  constexpr int64_t kBytes = int64_t{16} << 20;
  const int64_t floats = kBytes / 4 / world.size * world.size;
  SelfcheckComm comm;
  comm.world_size = world.size;
  {
    auto input = torch::ones({floats}, options), output = torch::empty({floats}, options);
    std::vector<int64_t> even;  // equal chunks
    const double ms = MedianMs(device, group, warmup, iterations, [&] {
      world.backend->alltoall_base(output, input, even, even)->wait();
    });
    comm.all_to_all_gbps = double(floats * 4) / (ms * 1e-3) / 1e9 * (ranks - 1) / ranks;
  }
  {
    auto input = torch::ones({floats / world.size}, options);
    auto output = torch::empty({floats}, options);
    const double ms = MedianMs(device, group, warmup, iterations,
                               [&] { world.backend->_allgather_base(output, input)->wait(); });
    comm.all_gather_gbps = double(floats * 4) / (ms * 1e-3) / 1e9 * (ranks - 1) / ranks;
  }
  {
    // Latency: one float from every rank.
    auto input = torch::ones({1}, options), output = torch::empty({world.size}, options);
    comm.latency_us = 1e3 * MedianMs(device, group, warmup, 3 * iterations, [&] {
                        world.backend->_allgather_base(output, input)->wait();
                      });
  }
  return comm;
}

}  // namespace ditbench
