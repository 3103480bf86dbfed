#include "runner/sweep_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "experiments/host_info.h"
#include "experiments/worker_contract.h"
#include "runner/build_info.h"
#include "runner/environment.h"
#include "runner/ingest.h"
#include "runner/interrupt.h"
#include "runner/plan_output.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<int> NvidiaSmiGpus() {
  std::vector<int> gpus;
  for (const auto& line : CommandOutputLines("nvidia-smi -L"))
    if (line.rfind("GPU ", 0) == 0) gpus.push_back(static_cast<int>(gpus.size()));
  return gpus;
}

std::filesystem::path DefaultWorker() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "ditbench-worker";
  return self.parent_path() / "ditbench-worker";
}

std::string Axes(const TrialConfig& c) {
  return fmt::format("{} {}px {} u{} r{} pf{} cfg{} dp{}", c.model, c.resolution,
                     PrecisionName(c.precision), c.ulysses, c.ring, c.pipefusion, c.cfg, c.dp);
}

bool IsFailure(TrialStatus s) {
  return s == TrialStatus::kFailed || s == TrialStatus::kOom || s == TrialStatus::kTimeout ||
         s == TrialStatus::kCrashed;
}

}  // namespace

std::string GpuName() {
  auto names = CommandOutputLines("nvidia-smi --query-gpu=name --format=csv,noheader");
  return names.empty() ? "unknown GPU" : names.front();
}

Placement ResolvePlacement(const std::string& gpus) {
  Placement p;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (gpus == "auto") {
    p.gpus = NvidiaSmiGpus();
    p.capacity = p.gpus.empty() ? Capacity{cores, false}
                                : Capacity{static_cast<int>(p.gpus.size()), true};
    return p;
  }
  if (gpus.rfind("cpu", 0) == 0) {
    int slots = cores;
    if (gpus.size() > 3) {
      if (gpus[3] != ':' || gpus.size() == 4 ||
          gpus.find_first_not_of("0123456789", 4) != std::string::npos)
        throw std::invalid_argument(
            fmt::format("--gpus '{}': expected auto, a list like 0,1,2, or cpu:N", gpus));
      slots = std::stoi(gpus.substr(4));
    }
    if (slots < 1) throw std::invalid_argument("--gpus cpu:N needs N >= 1");
    p.capacity = Capacity{slots, false};
    return p;
  }
  std::stringstream in(gpus);
  std::string item;
  std::set<int> seen;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(
          fmt::format("--gpus '{}': expected auto, a list like 0,1,2, or cpu:N", gpus));
    int gpu = std::stoi(item);
    if (!seen.insert(gpu).second)
      throw std::invalid_argument(fmt::format("--gpus '{}': GPU {} listed twice", gpus, gpu));
    p.gpus.push_back(gpu);
  }
  p.capacity = Capacity{static_cast<int>(p.gpus.size()), true};
  return p;
}

int RunSweep(const RunOptions& options, Launcher& launcher, std::ostream& out, std::ostream& err) {
  ParseResult parsed = ParseSweepFile(options.sweep);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) err << e.ToString() << "\n";
    return 2;
  }
  const SweepSpec& spec = parsed.spec;
  Placement placement;
  try {
    placement = ResolvePlacement(options.gpus);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return 2;
  }
  PlanAssumptions assumptions;
  assumptions.device = DeviceFor(placement);
  SweepPlan plan = PlanSweep(spec, placement.capacity, assumptions, options.db);
  const auto worker = options.worker.empty() ? DefaultWorker() : options.worker;
  if (!options.dry_run && !std::filesystem::exists(worker)) {
    err << "ditbench run: error: worker not found at " << worker.string()
        << " (build ditbench-worker or pass --worker)\n";
    return 2;
  }
  if (options.dry_run) {
    WritePlanTable(spec, plan, assumptions, out);
    return 0;
  }
  const std::vector<PlannedTrial>& trials = plan.trials;

  std::unique_ptr<ResultsDb> db;
  std::int64_t campaign = 0;
  std::map<std::string, TrialStatus> statuses;
  try {
    db = ResultsDb::Open(options.db);
    CampaignRecord record;
    record.sweep_name = spec.name;
    record.sweep_path = options.sweep.string();
    record.spec_hash = Sha256Hex(spec.text);
    record.spec_text = spec.text;
    record.build = BuildId();
    record.host = Hostname();
    record.environment = CoordinatorEnvironment();
    record.environment["gpus"] = options.gpus;
    record.environment["slots"] = placement.capacity.slots;
    record.environment["on_gpu"] = placement.capacity.on_gpu;
    campaign = db->ResumeOrCreateCampaign(record, options.fresh);
    if (int n = db->MarkRunningAsInterrupted(campaign))
      out << fmt::format("{} trial(s) left running by an earlier coordinator marked interrupted\n", n);
    statuses = db->TrialStatuses(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return 2;
  }

  auto run_root = options.run_root.empty()
                      ? std::filesystem::absolute(options.db).parent_path() / "runs"
                      : options.run_root;
  int ran = 0, ok = 0, failed = 0, skipped = 0, kept = 0, index = 0;
  bool worker_described = false;
  out << fmt::format("campaign {} of sweep '{}': {} trials on {} {}\n", campaign, spec.name,
                     trials.size(), placement.capacity.slots,
                     placement.capacity.on_gpu ? "GPU(s)" : "CPU slot(s)");
  for (const auto& t : trials) {
    ++index;
    if (InterruptRequested()) break;
    auto found = statuses.find(t.key);
    if (found != statuses.end() && options.rerun != "all") {
      TrialStatus s = found->second;
      bool done = s == TrialStatus::kOk || s == TrialStatus::kSkipped ||
                  (IsFailure(s) && options.rerun != "failed");
      if (done) {
        ++kept;
        if (IsFailure(s)) ++failed;
        continue;
      }
    }
    const std::string prefix = fmt::format("[{}/{}] {} {}", index, trials.size(), t.key, Axes(t.config));
    TrialRecord record;
    try {
      if (t.invalid_reason) {
        record.trial_key = t.key;
        record.config = CanonicalJson(t.config);
        record.status = TrialStatus::kSkipped;
        record.error = *t.invalid_reason;
        record.world_size = t.config.world_size();
        record.started_at = record.finished_at = UnixNow();
        db->RecordTrial(campaign, record);
        ++skipped;
        out << prefix << ": skipped: " << *t.invalid_reason << "\n";
        continue;
      }
      const auto run_dir = run_root / std::to_string(campaign) / t.key;
      std::filesystem::remove_all(run_dir);
      std::filesystem::create_directories(run_dir);
      TrialFile file{t.key, spec.name, t.config, placement.capacity.on_gpu ? "cuda" : "cpu"};
      WriteFileAtomically(run_dir / "trial.json", ToJson(file).dump(2));

      TrialRecord running;
      running.trial_key = t.key;
      running.config = CanonicalJson(t.config);
      running.status = TrialStatus::kRunning;
      running.world_size = t.config.world_size();
      running.run_dir = run_dir.string();
      running.started_at = UnixNow();
      db->MarkRunning(campaign, running);
      out << prefix << ": running\n" << std::flush;

      LaunchRequest request;
      request.trial_key = t.key;
      request.run_dir = run_dir;
      request.worker = worker;
      request.args = {"--trial", (run_dir / "trial.json").string()};
      request.world_size = t.config.world_size();
      if (placement.capacity.on_gpu)
        request.gpus.assign(placement.gpus.begin(), placement.gpus.begin() + request.world_size);
      request.timeout_s = t.config.timeout_s;
      LaunchOutcome outcome = launcher.Run(request);

      record = IngestTrial(t.config, t.key, run_dir, outcome);
      if (InterruptRequested() && record.status != TrialStatus::kOk) {
        record.status = TrialStatus::kInterrupted;
        record.error = "interrupted by the user";
      }
      record.started_at = running.started_at;
      record.finished_at = UnixNow();
      db->RecordTrial(campaign, record);
      if (!worker_described && record.status == TrialStatus::kOk &&
          record.worker_environment.is_object() && !record.worker_environment.empty()) {
        db->UpdateCampaignEnvironment(campaign, {{"worker", record.worker_environment}});
        worker_described = true;
      }
    } catch (const std::exception& e) {
      // Storage or filesystem trouble: say so and stop; results already committed are safe.
      err << prefix << ": error: " << e.what() << "\n";
      return 1;
    }
    ++ran;
    if (record.status == TrialStatus::kOk) {
      ++ok;
      const auto& m = *record.metrics;
      out << prefix << fmt::format(": ok  median {:.3f} ms  [{:.3f}, {:.3f}]  cov {:.3f}  skew {:.3f} ms  n={}\n",
                                   m.latency_ms, m.ci_low_ms, m.ci_high_ms, m.cov, m.skew_ms,
                                   m.iterations);
    } else if (record.status != TrialStatus::kInterrupted) {
      ++failed;
      out << prefix << ": " << StatusName(record.status) << ": " << record.error << "\n";
    }
  }
  if (InterruptRequested()) {
    out << "interrupted: finished trials are saved; run the same command again to resume\n";
    return 130;
  }
  try {
    db->FinishCampaign(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
  }
  out << fmt::format("done: {} ran ({} ok), {} skipped as invalid, {} already recorded, {} failed\n",
                     ran, ok, skipped, kept, failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace ditbench
