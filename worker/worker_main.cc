// ditbench-worker: one rank of one trial. Started by `ditbench run`, or by hand under torchrun
// or srun with the same environment. With --forward, one rank of `ditbench forward` instead
// (worker/reference_forward.h). With --selfcheck, what `ditbench selfcheck` judges
// (worker/selfcheck.h).
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "contract/worker_environment.h"
#include "worker/cpu_isa_guard.h"
#include "worker/reference_forward.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  ditbench::GuardCpuIsa();  // before anything runs a LibTorch kernel
  ditbench::WorkerOptions options;
  CLI::App app{"ditbench-worker: runs one rank of one benchmark trial"};
  std::string trial, result_dir;
  if (const char* env = std::getenv(ditbench::kTrialFileVariable)) trial = env;
  if (const char* env = std::getenv(ditbench::kResultDirVariable)) result_dir = env;
  app.add_option("--trial", trial, "trial.json written by the coordinator (or $DITBENCH_TRIAL)");
  app.add_option("--result-dir", result_dir, "where rank<r>.json goes (or $DITBENCH_RESULT)");
  bool describe = false;
  app.add_flag("--describe", describe,
               "print this machine's devices, driver and library versions as JSON, and exit");
  ditbench::ReferenceForwardOptions forward;
  auto* forward_dir = app.add_option("--forward", forward.model_dir,
                                     "run one forward of this diffusers-format model folder");
  app.add_option("--inputs", forward.inputs, "--forward: inputs (safetensors)");
  app.add_option("--output", forward.output, "--forward: where rank 0 writes `sample`");
  app.add_option("--ulysses", forward.ulysses, "--forward: Ulysses degree");
  app.add_option("--ring", forward.ring, "--forward: ring degree");
  app.add_option("--tp", forward.tp, "--forward: tensor-parallel degree");
  app.add_option("--precision", forward.precision, "--forward: fp32, tf32, bf16 or fp16");
  app.add_option("--vae-tile", forward.vae_tile, "--forward, a VAE folder: tile size in pixels");
  app.add_option("--variant", forward.variant,
                 "--forward: the weights variant (diffusion_pytorch_model.VARIANT.safetensors)");
  app.add_option("--repeats", forward.repeats,
                 "--forward: time this many more forwards, print {\"forward_ms\": [...]}");
  std::string selfcheck;
  app.add_option("--selfcheck", selfcheck,
                 "measure this device's timing, numerics, throughput (and, with WORLD_SIZE >= 2, "
                 "communication) and write the figures to this file (rank 0)");
  CLI11_PARSE(app, argc, argv);
  if (describe) return ditbench::DescribeWorker();
  if (!selfcheck.empty()) return ditbench::RunSelfcheck(selfcheck);
  if (*forward_dir) {
    if (forward.inputs.empty() || forward.output.empty()) {
      std::fprintf(stderr, "ditbench-worker: error: --forward needs --inputs and --output\n");
      return 2;
    }
    return ditbench::RunReferenceForward(forward);
  }
  if (trial.empty()) {
    std::fprintf(stderr, "ditbench-worker: error: no trial file: pass --trial or set DITBENCH_TRIAL\n");
    return 2;
  }
  options.trial = trial;
  options.result_dir = result_dir;
  return ditbench::RunWorker(options);
}
