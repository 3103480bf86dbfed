// `ditbench env`: what a campaign started here would record about the machine, as JSON: the
// coordinator's view (host, CPU, GPUs from nvidia-smi and from the discovery `run` uses: NVML,
// the CUDA driver or nvidia-smi; build, NCCL_*/CUDA_* variables) and the worker's (device, driver, CUDA, cuDNN, NCCL, LibTorch, threads).
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/selfcheck.h"
#include "machine/environment.h"
#include "machine/gpu_discovery.h"
#include "machine/host_info.h"

namespace ditbench {

std::function<int()> DefineEnvCommand(CLI::App& sub) {
  auto worker = std::make_shared<std::filesystem::path>();
  sub.add_option("--worker", *worker, "worker program (default: next to ditbench)");
  auto db = std::make_shared<std::filesystem::path>("results.db");
  sub.add_option("--db", *db, "results database whose stored selfchecks are shown (read only)")
      ->capture_default_str();
  return [worker, db] {
    nlohmann::json out = {{"coordinator", CoordinatorEnvironment()}};
    out["coordinator"]["gpu_discovery"] = ToJson(MachineGpuDiscovery()->Listing());
    std::filesystem::path program = *worker;
    if (program.empty()) {
      std::error_code ec;
      program = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "ditbench-worker";
    }
    std::string text;
    if (std::filesystem::exists(program))
      for (const auto& line : CommandOutputLines({program.string(), "--describe"}))
        text += line + "\n";
    try {
      out["worker"] = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      out["worker"] = {{"error", "could not run " + program.string() + " --describe"}};
    }
    out["selfcheck"] = StoredSelfchecksJson(*db);
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  };
}

}  // namespace ditbench
