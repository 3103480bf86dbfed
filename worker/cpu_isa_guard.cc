#include "worker/cpu_isa_guard.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <torch/torch.h>

#include "machine/cpu_features.h"

namespace ditbench {
namespace {

constexpr const char* kIsaVariable = "ONEDNN_MAX_CPU_ISA";

nlohmann::json& Report() {
  static nlohmann::json report;
  return report;
}

// The kernels a DiT runs on the CPU in low precision: matmul and a biased linear, bf16 and fp16.
[[noreturn]] void ProbeInChild() {
  try {
    for (auto dtype : {torch::kBFloat16, torch::kFloat16}) {
      auto a = torch::ones({256, 256}, torch::TensorOptions().dtype(dtype));
      auto bias = torch::ones({256}, torch::TensorOptions().dtype(dtype));
      auto c = torch::matmul(a, a);
      auto d = torch::nn::functional::linear(a, a, bias);
      if (c.sum().item<float>() <= 0 || d.sum().item<float>() <= 0) _exit(3);
    }
  } catch (...) {
    _exit(2);
  }
  _exit(0);
}

// "ok", or how the probe died.
std::string Probe() {
  const pid_t child = fork();
  if (child < 0) return "not run (fork failed)";
  if (child == 0) ProbeInChild();
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0) return "not run (waitpid failed)";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return "hung (killed after 120 s)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFSIGNALED(status)) return "crashed: signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "ok";
  return "failed: exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

}  // namespace

nlohmann::json GuardCpuIsa() { return Report() = GuardCpuIsaWith(ReadCpuid(), Probe); }

nlohmann::json GuardCpuIsaWith(const CpuidLeaves& leaves, const IsaProbe& probe_isa) {
  nlohmann::json report;
  const AmxSupport amx = DescribeAmx(leaves);
  report["amx_advertised"] = amx.advertised;
  report["amx_max_palette"] = amx.max_palette;
  report["amx_os_tile_state"] = amx.os_tile_state;

  const char* user = std::getenv(kIsaVariable);
  if (!user || !*user) user = std::getenv("DNNL_MAX_CPU_ISA");
  if (user && *user) {
    report["source"] = "user";
    report["onednn_max_cpu_isa"] = user;
    report["probe"] = probe_isa();
    return report;
  }
  const IsaCap cap = DecideIsaCap(leaves);
  report["decision"] = cap.reason;
  report["source"] = cap.onednn_max_cpu_isa ? "cpuid" : "default";
  if (cap.onednn_max_cpu_isa) setenv(kIsaVariable, cap.onednn_max_cpu_isa->c_str(), 1);
  std::string probe = probe_isa();
  nlohmann::json tried = nlohmann::json::array();
  // A crash nobody has listed yet: step down until the probe survives.
  for (const char* fallback : kIsaFallbacks) {
    if (probe.rfind("crashed", 0) != 0) break;
    const char* current = std::getenv(kIsaVariable);
    if (current && std::string(current) == fallback) continue;
    tried.push_back({{"onednn_max_cpu_isa", current ? current : "default"}, {"probe", probe}});
    setenv(kIsaVariable, fallback, 1);
    report["source"] = "probe";
    probe = probe_isa();
  }
  if (!tried.empty()) report["probe_history"] = tried;
  report["probe"] = probe;
  const char* effective = std::getenv(kIsaVariable);
  report["onednn_max_cpu_isa"] = effective ? nlohmann::json(effective) : nlohmann::json(nullptr);
  return report;
}

const nlohmann::json& CpuIsaReport() { return Report(); }

}  // namespace ditbench
