// `ditbench forward MODEL_DIR --inputs IN --output OUT`: one transformer forward (or VAE decode)
// on a diffusers-format folder's weights, for comparing with diffusers (README.md, "The CLI").
// Torch-free: the ranks are ditbench-worker --forward processes (worker/
// reference_forward.h), started by the LocalLauncher with the torchrun environment, as `run`
// starts a trial's ranks. Their output goes to rank logs in a scratch folder; a failing rank's
// log is copied to stderr.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>

#include <CLI/CLI.hpp>

#include "base/untrusted_input.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "experiments/trial.h"
#include "launch/local_launcher.h"
#include "model_zoo/shapes/diffusers_files.h"

namespace ditbench {
namespace {

struct ForwardArgs {
  std::filesystem::path model_dir, inputs, output, worker;
  int ulysses = 1, ring = 1, tp = 1;
  std::string precision = "fp32";
  int vae_tile = 0;
  std::string variant;
  std::vector<std::string> gpus;
  double timeout_s = 1800;
};

// The most bytes of forward's inputs file (latents and prompt embeddings of one call).
constexpr std::uint64_t kMaxForwardInputsBytes = 16ull << 30;
// The most of a rank's log shown when it fails: its end, where the error is.
constexpr std::uint64_t kMaxLogTailBytes = 64 << 10;

// The end of a rank's log, read as untrusted input (the rank may have replaced it by a FIFO).
std::string LogTail(const std::filesystem::path& path) {
  try {
    const RegularFile file = OpenRegularFile(path, std::numeric_limits<std::uint64_t>::max());
    const std::uint64_t from = file.size > kMaxLogTailBytes ? file.size - kMaxLogTailBytes : 0;
    return ReadRegularFileAt(file, path, from, kMaxLogTailBytes);
  } catch (const std::runtime_error& error) {
    return std::string(error.what()) + "\n";
  }
}

int RunForward(const ForwardArgs& a) {
  if (a.ulysses < 1 || a.ring < 1 || a.tp < 1)
    throw UserError("--ulysses, --ring and --tp must be at least 1");
  if (!IsValidVaeTile(a.vae_tile))  // as the sweep field vae_tile
    throw UserError("--vae-tile " + std::to_string(a.vae_tile) + ": expected " + kVaeTileExpected);
  if (!std::filesystem::is_directory(a.model_dir))
    throw UserError("MODEL_DIR " + a.model_dir.string() + ": no such folder");
  // The files diffusers would load for the variant, checked before any rank starts; the model
  // zoo's std::invalid_argument for a folder that is not one is the user's mistake here.
  try {
    DiffusersWeightFiles(a.model_dir, a.variant);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what(), InputLocation{a.model_dir.string(), 0, ""});
  }
  // The inputs are the user's file, read by every rank: a FIFO or a device is refused here,
  // before any rank starts (the worker's reader refuses them too, per rank).
  try {
    OpenRegularFile(a.inputs, kMaxForwardInputsBytes);
  } catch (const std::runtime_error& error) {
    throw UserError(std::string("--inputs ") + error.what(),
                    InputLocation{a.inputs.string(), 0, ""});
  }
  const auto worker = a.worker.empty() ? DefaultWorkerProgram() : a.worker;
  if (!std::filesystem::exists(worker))
    throw UserError(worker.string() +
                    ": no such worker (build ditbench-worker or "
                    "pass --worker)");
  const int world = a.ulysses * a.ring * a.tp;
  if (!a.gpus.empty() && static_cast<int>(a.gpus.size()) != world)
    throw UserError("--gpus names " + std::to_string(a.gpus.size()) + " devices, the ranks need " +
                    std::to_string(world));

  std::string scratch = (std::filesystem::temp_directory_path() / "ditbench-forward-XXXXXX");
  if (!mkdtemp(scratch.data())) throw std::runtime_error("cannot create a scratch folder in /tmp");
  LaunchRequest request;
  request.trial_key = "forward";
  request.run_dir = scratch;
  request.worker = worker;
  request.world_size = world;
  request.devices = a.gpus;
  request.timeout_s = a.timeout_s;
  request.args = {"--forward",   std::filesystem::absolute(a.model_dir).string(),
                  "--inputs",    std::filesystem::absolute(a.inputs).string(),
                  "--output",    std::filesystem::absolute(a.output).string(),
                  "--ulysses",   std::to_string(a.ulysses),
                  "--ring",      std::to_string(a.ring),
                  "--tp",        std::to_string(a.tp),
                  "--precision", a.precision};
  if (!a.variant.empty()) {
    request.args.push_back("--variant");
    request.args.push_back(a.variant);
  }
  if (a.vae_tile > 0) {
    request.args.push_back("--vae-tile");
    request.args.push_back(std::to_string(a.vae_tile));
  }
  LocalLauncher launcher;
  launcher.Start(request);
  std::optional<FinishedTrial> done;
  while (!(done = launcher.Wait(std::chrono::seconds(1)))) {}
  const LaunchOutcome& outcome = done->outcome;
  int code = kExitOk;
  if (!outcome.launch_error.empty()) {
    std::cerr << "ditbench: error: " << outcome.launch_error << "\n";
    code = kExitTrialsFailed;
  } else if (outcome.timed_out) {
    std::cerr << "ditbench: error: forward timed out after " << a.timeout_s << " s\n";
    code = kExitTrialsFailed;
  } else {
    for (std::size_t r = 0; r < outcome.ranks.size(); ++r) {
      const RankExit& rank = outcome.ranks[r];
      if (rank.exited && !rank.signal && rank.exit_code == 0) continue;
      if (rank.killed_by_us) continue;  // stopped because another rank failed
      std::cerr << LogTail(request.run_dir / ("rank" + std::to_string(r) + ".log"));
      if (code == kExitOk)
        code = rank.exited && !rank.signal && rank.exit_code == kExitUsage ? kExitUsage
                                                                          : kExitTrialsFailed;
    }
    if (code == kExitOk && outcome.first_failed_rank >= 0) code = kExitTrialsFailed;
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  if (code == kExitOk) std::cout << "wrote " << a.output.string() << "\n";
  return code;
}

}  // namespace

std::function<int()> DefineForwardCommand(CLI::App& sub) {
  auto a = std::make_shared<ForwardArgs>();
  sub.add_option("MODEL_DIR", a->model_dir,
                 "diffusers-format folder: config.json + *.safetensors (a transformer or a VAE)")
      ->required();
  sub.add_option("--inputs", a->inputs, "inputs named as in diffusers' forward (safetensors)")
      ->required();
  sub.add_option("--output", a->output, "where the result goes, as tensor `sample` (safetensors)")
      ->required();
  sub.add_option("--ulysses", a->ulysses, "Ulysses degree (ranks)");
  sub.add_option("--ring", a->ring, "ring-attention degree (ranks)");
  sub.add_option("--tp", a->tp, "tensor-parallel degree (ranks; heads and MLP split)");
  sub.add_option("--precision", a->precision, "fp32, tf32, bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}));
  sub.add_option("--vae-tile", a->vae_tile,
                 "a VAE folder: decode in tiles of this many pixels (64 to 16384, a multiple of "
                 "64, as the sweep field vae_tile)");
  sub.add_option("--variant", a->variant,
                 "diffusers' weights variant: load diffusion_pytorch_model.VARIANT.safetensors (or "
                 "its sharded index) instead of the default file, as from_pretrained(variant=...)");
  sub.add_option("--gpus", a->gpus, "CUDA devices, one per rank (default: CPU)")->delimiter(',');
  sub.add_option("--worker", a->worker, "worker program (default: next to ditbench)");
  sub.add_option("--timeout", a->timeout_s, "seconds before the ranks are killed");
  return [a] { return RunForward(*a); };
}

}  // namespace ditbench
