#include "plan/sweep_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <thread>

#include "base/parallel_for.h"
#include "experiments/trial_kind.h"
#include "experiments/trial_requests.h"
#include "experiments/trial_rows.h"
#include "machine/device_peaks.h"
#include "machine/rank_sharing.h"
#include "metrics/serving.h"
#include "model_zoo/shapes/memory_traffic.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"
#include "plan/comm_volume.h"
#include "plan/device_prior.h"
#include "plan/fitted_model.h"
#include "plan/step_cache_fraction.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

// Median latencies of earlier ok trials by key, newest campaign first, read at once. A missing
// or not yet migrated database means no measurements (`run` migrates it before it writes); one
// that is there and cannot be read (damaged, foreign, newer, edited by hand) is an error, as it
// is for every command (StorageError: exit 3).
class EarlierResults {
 public:
  explicit EarlierResults(const std::filesystem::path& path) {
    std::error_code ec;
    // No file, or an empty one (a database `run` is about to create): nothing measured yet.
    if (path.empty() || !std::filesystem::exists(path, ec) ||
        std::filesystem::file_size(path, ec) == 0)
      return;
    try {
      auto db = ResultsDb::Open(path, /*read_only=*/true);
      measured_ = db->planner_history().NewestOkMeasurements();
      cached_ = db->planner_history().StepCacheObservations();
    } catch (const OlderSchemaError&) {
      measured_.clear();
      cached_.clear();
    }
  }

  std::optional<PlannerHistory::Measurement> Measured(const std::string& key) const {
    const auto it = measured_.find(key);
    // A time of 0 is no measurement (PlannerHistory reads none; the database is untrusted).
    if (it == measured_.end() || !(it->second.latency_ms > 0)) return std::nullopt;
    return it->second;
  }
  // The trials with a step cache and what they skipped (plan/step_cache_fraction.h).
  const std::vector<PlannerHistory::StepCacheObservation>& cached() const { return cached_; }

 private:
  std::unordered_map<std::string, PlannerHistory::Measurement> measured_;
  std::vector<PlannerHistory::StepCacheObservation> cached_;
};

// What a database says about a sweep's trials on one device, read once per plan (a plan for
// both policies estimates twice): their measurements, and the cost model fitted on the
// device's trials (unset without a database).
struct Evidence {
  Evidence(const std::filesystem::path& db, const std::string& device) : earlier(db) {
    if (!db.empty()) fitted = FitFromDatabase(db, device);
  }
  EarlierResults earlier;
  std::optional<FittedModel> fitted;
};

// This machine's online cores, asked once: std::thread::hardware_concurrency reads sysfs on
// every call, and the planner asks for every trial.
int MachineCores() {
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return cores;
}

// The trials of `spec` for `capacity`: expanded, de-duplicated by key, judged; no estimates.
SweepPlan ClassifiedTrials(const SweepSpec& spec, const Capacity& capacity) {
  SweepPlan plan;
  plan.counts = ExpandSweep(spec, capacity.slots);
  std::vector<TrialConfig>& expanded = plan.counts.trials;
  // Each trial's key and verdict, on every core: they depend on the trial alone, and are most
  // of a large plan's time (a duplicate's verdict is thrown away; duplicates are rare).
  std::vector<std::string> trial_keys(expanded.size());
  std::vector<TrialVerdict> verdicts(expanded.size());
  ParallelFor(expanded.size(), [&](std::size_t i) {
    trial_keys[i] = TrialKey(expanded[i]);
    verdicts[i] = Judge(expanded[i], capacity);
  });
  std::unordered_set<std::string> keys;
  keys.reserve(expanded.size());
  plan.trials.reserve(expanded.size());
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    if (!keys.insert(trial_keys[i]).second) {
      ++plan.duplicates;
      continue;
    }
    // Made in place: a planned trial is a kilobyte, and a plan may hold 100,000.
    PlannedTrial& t = plan.trials.emplace_back();
    t.config = std::move(expanded[i]);
    t.key = std::move(trial_keys[i]);
    TrialVerdict& verdict = verdicts[i];
    t.unsupported = !verdict.invalid && verdict.unsupported;
    t.invalid_reason =
        verdict.invalid ? std::move(verdict.invalid) : std::move(verdict.unsupported);
  }
  plan.counts.trials.clear();
  return plan;
}

// A serving trial's service time of each shape its requests ask for: the trial's own shape's
// estimate (measured, predicted or analytic: `own_ms`) scaled by the analytic model's ratio of
// that shape's time to the own shape's. Empty when the trace cannot be read (EstimateServing
// says why).
std::vector<double> ShapeServiceMs(const TrialConfig& config, double own_ms,
                                   const PlanAssumptions& a) {
  std::vector<RequestShape> shapes;
  try {
    shapes = TrialShapes(config);
  } catch (const std::exception&) {
    return {};
  }
  const RequestShape own{config.resolution, config.image_height(), config.frames, config.steps, 1};
  const double own_analytic = AnalyticEstimate(ShapeTrial(config, own), a).iteration_ms;
  std::vector<double> service;
  for (const RequestShape& shape : shapes) {
    RequestShape same = shape;
    same.weight = 1;
    const double analytic = AnalyticEstimate(ShapeTrial(config, shape), a).iteration_ms;
    service.push_back(same == own || own_analytic <= 0 ? own_ms : own_ms * analytic / own_analytic);
  }
  return service;
}

// Fills the estimates, estimated_wall_s and the packed wall time of `plan` (from
// ClassifiedTrials) under `a`, replacing any earlier ones.
void EstimateTrials(SweepPlan& plan, const SweepSpec& spec, const PlanAssumptions& a,
                    const Evidence& evidence) {
  const EarlierResults& earlier = evidence.earlier;
  plan.estimated_wall_s = 0;
  plan.packed_wall_s = 0;
  for (PlannedTrial& t : plan.trials) t.estimate.reset();

  // Estimates: a trial measured before takes its own time, memory and start-up; the others
  // are analytic, with the start-up measured on this database's trials when there are any.
  std::vector<std::optional<PlannerHistory::Measurement>> measured(plan.trials.size());
  double startup_sum = 0;
  int startups = 0;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    if (plan.trials[i].invalid_reason && !plan.trials[i].unsupported) continue;
    measured[i] = earlier.Measured(plan.trials[i].key);
    if (measured[i] && measured[i]->startup_s) {
      startup_sum += *measured[i]->startup_s;
      ++startups;
    }
  }
  PlanAssumptions analytic = a;
  if (startups > 0) {  // measured start-ups before the selfcheck's
    analytic.startup_s = startup_sum / startups;
    if (analytic.calibration) analytic.calibration->startup_s = analytic.startup_s;
  }
  // With a database, the cost model fitted from its trials of this device kind predicts the
  // trials it has not measured (plan/fitted_model.h); it says when it has too few to fit.
  const std::optional<FittedModel>& fitted = evidence.fitted;
  plan.estimates_from = fitted ? fitted->Explain() : "";
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    PlannedTrial& t = plan.trials[i];
    t.sharing = PlannedSharing(t.config, a);
    if (t.invalid_reason && !t.unsupported) continue;
    // A command's cost is its program's: only an earlier measurement of it says anything.
    if (!TraitsOf(t.config.workload).builtin_model && !measured[i]) continue;
    // A step cache: the share of the denoising work its skipped steps leave (plan/
    // step_cache_fraction.h); a measurement of the key itself needs none.
    std::optional<ComputedFraction> fraction;
    if (!t.config.cache.empty()) fraction = ExpectedComputedFraction(t.config, earlier.cached());
    TrialEstimate e = AnalyticEstimate(t.config, analytic, fraction ? fraction->work : 1.0);
    if (fraction && !measured[i]) {
      e.cache_computed_fraction = fraction->computed;
      e.cache_fraction_source = fraction->source;
    }
    if (const auto& m = measured[i]) {
      e.iteration_ms = m->latency_ms;
      if (m->peak_mem_mb) e.memory_mb = *m->peak_mem_mb;
      e.trial_s = m->startup_s.value_or(analytic.startup_s) +
                  (t.config.warmup + TimedIterations(t.config, m->latency_ms)) * m->latency_ms /
                      1000;
      e.source = "measured";
    } else if (fitted && fitted->model) {
      if (auto p = fitted->model->Iteration(t.config, {}, t.sharing)) {
        if (fraction) {  // the fit knows no cache: its denoising part scaled, the decode not
          const double decode = std::min(e.decode_ms.value_or(0.0), p->low);
          for (double* v : {&p->value, &p->low, &p->high})
            *v = decode + (*v - decode) * fraction->work;
        }
        e.iteration_ms = p->value;
        e.iteration_low_ms = p->low;
        e.iteration_high_ms = p->high;
        const auto startup = fitted->model->Startup(t.config);
        e.trial_s = (startup ? startup->value : analytic.startup_s) +
                    (t.config.warmup + TimedIterations(t.config, p->value)) * p->value / 1000;
        e.source = "predicted";
      }
    }
    // A serving trial: its load through its replicas' queue at the estimated time a request;
    // it runs for the load's window after its warm-up and isolated requests.
    if (KindOf(t.config) == TrialKind::kServed && e.iteration_ms > 0) {
      const std::vector<double> service = ShapeServiceMs(t.config, e.iteration_ms, analytic);
      e.serve = EstimateServing(t.config, service);
      const double fixed_s =
          e.trial_s - TimedIterations(t.config, e.iteration_ms) * e.iteration_ms / 1000;
      // Every replica times every shape alone before the load.
      double isolated_ms = 0;
      for (double ms : service) isolated_ms += std::max(1, t.config.repeats.min) * ms;
      e.trial_s = fixed_s + t.config.dp * isolated_ms / 1000 + e.serve->window_s;
    }
    // Every launch of a trial costs a whole trial (replicates: separate processes).
    if (!t.unsupported) plan.estimated_wall_s += e.trial_s * spec.replicates;
    t.estimate = e;
  }
  plan.pack_slots = a.pack_slots;
  if (a.pack_slots > 0) plan.packed_wall_s = PackedWallSeconds(plan, spec.replicates, a.pack_slots);
}

}  // namespace

ServeEstimate EstimateServing(const TrialConfig& config, const std::vector<double>& service_ms) {
  ServeEstimate e;
  // From the configuration: the plan runs before any trial file holds the requests the run
  // will serve (the coordinator materializes the same list then, experiments/trial_requests.h).
  std::vector<RequestShape> shapes;
  try {
    shapes = TrialShapes(config);
  } catch (const std::exception& error) {
    e.note = error.what();
    return e;
  }
  if (service_ms.empty()) return e;
  const auto service_of = [&](int shape) {
    return service_ms.size() == 1 ? service_ms.front()
                                  : service_ms.at(static_cast<std::size_t>(shape));
  };
  // The mean service over the shapes by weight (a trace's weights are its counts).
  double weight = 0, weighted = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    weight += shapes[i].weight;
    weighted += shapes[i].weight * service_of(static_cast<int>(i));
  }
  e.service_ms = weight > 0 ? weighted / weight : service_of(0);
  e.capacity_per_s = config.dp * 1000.0 / e.service_ms;
  // A share of capacity is planned at the capacity the plan expects its capacity trial to
  // measure: a closed loop of capacity_concurrency requests at the estimated service time.
  TrialConfig planned = config;
  if (const ServeLoad& load = *config.serve; load.of_capacity != 0 && load.rate_per_s == 0)
    planned = ResolveCapacityShare(
        config, std::min(load.capacity_concurrency, config.dp) * 1000.0 / e.service_ms);
  RequestList list;
  try {
    list = MaterializeRequests(planned);
  } catch (const std::exception& error) {
    e.note = error.what();
    return e;
  }
  const std::vector<Request>& requests = list.requests;
  if (requests.empty()) return e;
  const ServeLoad& load = *planned.serve;
  const double last_arrival_s = requests.back().arrival_s;
  e.offered_per_s =
      load.concurrency > 0 ? std::min(load.concurrency, config.dp) * 1000.0 / e.service_ms
      : load.arrivals == ArrivalKind::kTrace
          ? (last_arrival_s > 0 ? (requests.size() - 1) / last_arrival_s : e.capacity_per_s)
          : load.rate_per_s;
  e.utilisation = e.offered_per_s / e.capacity_per_s;
  std::vector<double> service;
  for (const Request& r : requests) service.push_back(service_of(r.shape));
  const std::vector<RequestRecord> played =
      SimulateQueue(requests, service, config.dp, load.concurrency);
  std::vector<RequestRecord> timed;
  for (const RequestRecord& r : played) {
    e.window_s = std::max(e.window_s, r.end_ms / 1000);
    if (r.index >= load.warmup_requests) timed.push_back(r);
  }
  if (timed.empty()) return e;
  const ServingSummary s = SummarizeServing(timed, config.world_size(), load.slo_scale);
  e.p50_ms = s.p50_ms.estimate;
  e.p95_ms = s.p95_ms.estimate;
  e.p99_ms = s.p99_ms.estimate;
  return e;
}

double TimedIterations(const TrialConfig& c, double iteration_ms) {
  const double budget_iterations =
      c.repeats.max_seconds > 0 && iteration_ms > 0 ? c.repeats.max_seconds * 1000 / iteration_ms
                                                    : c.repeats.max;
  return std::clamp(budget_iterations, double(c.repeats.min), double(c.repeats.max));
}

int CpuCoresUsed(int cores, int ranks) {
  if (cores <= 0) cores = MachineCores();
  ranks = std::max(1, ranks);
  // As the worker sets its threads (worker/worker.cc): cores / ranks each, at
  // least one; time-sharing beyond the cores adds nothing.
  return std::min(cores, ranks * std::max(1, cores / ranks));
}

double PlannedSharing(const TrialConfig& c, const PlanAssumptions& a) {
  if (a.device != "cpu") return 1.0;
  const int cores = a.cpu_cores > 0 ? a.cpu_cores : MachineCores();
  return a.pack_slots > 0 ? PinnedCpuSharing(c.world_size(), cores, a.pack_slots)
                          : UnpinnedCpuSharing(c.world_size(), cores);
}

int PinnedCpuCoresUsed(int cores, int slots, int ranks) {
  if (cores <= 0) cores = MachineCores();
  return std::min(cores, std::max(1, ranks) * std::max(1, cores / std::max(1, slots)));
}

PackedSchedule::PackedSchedule(int slots)
    : free_at_(static_cast<std::size_t>(std::max(0, slots)), 0.0) {}

std::optional<double> PackedSchedule::Place(const std::string& key, int width, double seconds) {
  if (width < 1 || static_cast<std::size_t>(width) > free_at_.size()) return std::nullopt;
  // The `width` slots that free up first; the launch starts when the last of them does.
  std::vector<std::size_t> order(free_at_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return free_at_[x] < free_at_[y]; });
  double start = std::max(previous_start_, free_at_[order[width - 1]]);
  if (auto it = trial_ends_.find(key); it != trial_ends_.end()) start = std::max(start, it->second);
  const double end = start + seconds;
  for (int i = 0; i < width; ++i) free_at_[order[i]] = end;
  trial_ends_[key] = end;
  previous_start_ = start;
  end_ = std::max(end_, end);
  return start;
}

double PackedWallSeconds(const SweepPlan& plan, int replicates, int slots) {
  PackedSchedule schedule(slots);
  for (int launch = 0; launch < std::max(1, replicates); ++launch)
    for (const PlannedTrial& t : plan.trials)
      if (t.estimate && !t.invalid_reason)  // invalid or unsupported: not run
        schedule.Place(t.key, t.config.world_size(), t.estimate->trial_s);
  return schedule.end();
}

double VaeDecodeBytes(const ModelConfig& model, const ImageShape& shape, double bytes, int tile,
                      int vae_parallel) {
  // Untiled under vae_parallel: this rank's band of rows (the tallest); a tile is whole.
  const double share = tile > 0 ? 1.0 : VaeSplitShare(model, shape, 0, vae_parallel);
  const double tile_rows = (tile > 0 ? std::min(tile, shape.height) : shape.height) * share;
  const double tile_cols = tile > 0 ? std::min(tile, shape.width) : shape.width;
  const double patch = std::max(1, model.vae_patch);
  const double pixels = tile_rows * tile_cols / (patch * patch);  // decoded at once, last level
  const int frames = std::max(1, shape.frames);
  const double chunk = double(model.vae_decode_chunk) * std::max(1, model.vae_temporal);
  const double at_once = model.vae_decode_chunk > 0 ? std::min<double>(frames, chunk) : frames;
  const double top = model.vae_channels.empty() ? 128 : model.vae_channels.front();
  double working = kVaeDecodeTensors * at_once * pixels * top * bytes;
  if (model.vae_kind == VaeKind::kHunyuanVideo) {
    // Its mid block attends over every latent pixel of the frames decoded at once, with an
    // additive causal mask: the mask and the scores, n^2 each.
    const double down = std::max(1, model.vae_downsample);
    double latent_frames = LatentFrames(model, frames);
    if (model.vae_decode_chunk > 0)
      latent_frames = std::min<double>(latent_frames, model.vae_decode_chunk);
    const double n = latent_frames * (tile_rows / down) * (tile_cols / down);
    working = std::max(working, 2.0 * n * (n / share) * bytes);  // its queries, every key
  }
  const double video = 3.0 * frames * double(shape.width) * shape.height * 4;  // the clip, float32
  return working + video;
}

namespace {

// The TFLOP/s the trial's ranks compute at together: the GPUs' dense peak at an efficiency for
// the rank's work, or the CPU cores the trial gets (as calibrated, else a prior per core).
double PlannedTflops(const TrialConfig& c, const PlanAssumptions& a, double rank_elements) {
  if (a.device != "cpu") {
    const double peak = DensePeakTflops(a.device, c.precision).value_or(100.0);
    const double efficiency =
        a.efficiency > 0 ? a.efficiency : ComputeEfficiency(peak, rank_elements);
    return peak * efficiency * c.world_size();
  }
  const int cores_used = a.pack_slots > 0
                             ? PinnedCpuCoresUsed(a.cpu_cores, a.pack_slots, c.world_size())
                             : CpuCoresUsed(a.cpu_cores, c.world_size());
  // The worker gives each rank cores / ranks threads (at least one): ranks beyond the
  // cores time-share them, so no more than cores / threads compute at once.
  const int threads = std::max(1, cores_used / std::max(1, c.world_size()));
  const double computing = std::min<double>(c.world_size(), double(cores_used) / threads);
  const std::optional<double> rank_tflops =
      a.calibration ? a.calibration->CpuTflops(std::string(PrecisionName(c.precision)), threads,
                                               rank_elements)
                    : std::nullopt;
  return rank_tflops ? *rank_tflops * computing : a.cpu_tflops_per_core * cores_used;
}

// Scope pipeline: the VAE decode's time at `tflops`, its split's collectives included; nullopt
// for a model without a decode to time.
std::optional<double> DecodeMs(const TrialConfig& c, const PlanAssumptions& a,
                               const ModelConfig& model, double tflops) {
  // Every rank decodes its samples' latents whole, or vae_parallel ranks split them: each
  // a share of the FLOPs, then the split's collectives (halos, norms' statistics, the gather
  // of the decoded samples).
  const double split = std::max(1, c.vae_parallel);
  const double decode_flops = double(c.batch) * VaeDecodeFlops(model, c.image_shape()) *
                              VaeSplitShare(model, c.image_shape(), c.vae_tile, c.vae_parallel);
  if (decode_flops <= 0) return std::nullopt;
  double decode_ms = decode_flops / (tflops / c.world_size() * 1e12) * 1000;
  if (c.vae_parallel > 1) {
    CommPerStep gather;
    const ImageShape shape = c.image_shape();
    const double decoded = 3.0 * std::max(1, shape.frames) * shape.width * shape.height *
                           BytesPerElement(c.precision) * c.batch;
    auto& calls = gather.calls[std::size_t(Collective::kAllGather)];
    calls = c.vae_tile > 0 ? 2.0 * VaeDecodeTiles(model, shape, c.vae_tile)
                           : double(c.batch) * VaeSplitCollectives(model, shape);
    gather.bytes[std::size_t(Collective::kAllGather)] = decoded * (split - 1) / split;
    gather.total_bytes = decoded * (split - 1) / split;
    const LinkPrior& link = a.calibration && a.calibration->link
                                ? *a.calibration->link
                                : LinkFor(a.device, c.vae_parallel, a.gpus_per_node);
    decode_ms += CommSeconds(gather, link, a.link_gb_per_s) * 1000;
  }
  return decode_ms;
}

}  // namespace

TrialEstimate AnalyticEstimate(const TrialConfig& c, const PlanAssumptions& a, double step_work) {
  TrialEstimate e;
  e.source = "analytic";
  std::string unused;
  auto model = ResolveModel(c.model, c.model_overrides, &unused);
  if (!model) return e;
  const int forwards = c.scope == Scope::kForward ? 1 : c.steps;
  const int samples = RowsPerForward(c, *model);
  // Padded heads (pad_heads) are attended over like the others: their FLOPs are run.
  const double flops = step_work * forwards *
                       (ForwardFlops(*model, c.image_shape(), samples) +
                        HeadPaddingFlops(*model, c.image_shape(), samples, c.tp, c.ulysses));
  // Each rank runs its share of the rows (CFG batch halved by cfg=2) over its share of the
  // tokens (a PipeFusion patch's in a patch step).
  const double rank_rows = RowsPerRank(c, *model);
  const double joint_text = model->text_attention == TextAttention::kJoint ? model->text_tokens : 0;
  const double rank_tokens = double(ImageTokens(*model, c.image_shape())) / c.sequence_size() /
                                 c.effective_pipefusion_patches() +
                             joint_text;
  // Tensor parallelism: a rank's GEMMs and attention are 1 / tp as wide.
  const double rank_elements = rank_rows * rank_tokens * model->hidden / c.tp;
  const double tflops = PlannedTflops(c, a, rank_elements);
  e.iteration_ms = flops / (tflops * 1e12) * 1000;
  if (c.quant != Quantization::kNone && a.device != "cpu") {
    // FP8 layers (a prior): their GEMMs, 2 x tokens x parameters per sample and forward, at
    // twice the bf16 dense rate (FP8 tensor cores' dense peak on sm_89 and later), in the
    // steps a per-step schedule does not keep in high precision; the activations' quantization
    // passes are left out.
    const double tokens = double(ImageTokens(*model, c.image_shape())) + joint_text;
    const double low_steps =
        std::max(0, forwards - c.schedule.high_precision_first - c.schedule.high_precision_last);
    const double fp8_flops = 2.0 * tokens * double(Fp8ParameterCount(*model)) * samples * low_steps;
    e.iteration_ms -= 0.5 * fp8_flops / (tflops * 1e12) * 1000;
  }
  if (c.pipefusion > 1) {
    // Synchronous steps run the stages one after another; patch steps fill and drain a
    // pipeline of `patches` patches through `pipefusion` stages.
    const double p = c.pipefusion, m = c.effective_pipefusion_patches();
    const double sync = std::min(std::max(c.pipefusion_warmup_steps, 0), forwards);
    e.iteration_ms *= (sync * p + (forwards - sync) * (m + p - 1) / m) / forwards;
  }
  if (c.scope == Scope::kPipeline) {
    e.decode_ms = DecodeMs(c, a, *model, tflops);
    if (e.decode_ms) e.iteration_ms += *e.decode_ms;
  }
  if (auto comm = CommByKindPerStep(*model, c)) {
    e.comm_mb_per_step = comm->total_bytes / 1048576.0;
    // A selfcheck's measured link, unless the trial crosses nodes (then InfiniBand's prior).
    const bool crosses_nodes = a.gpus_per_node > 0 && c.world_size() > a.gpus_per_node;
    const LinkPrior& link = a.calibration && a.calibration->link && !crosses_nodes
                                ? *a.calibration->link
                                : LinkFor(a.device, c.world_size(), a.gpus_per_node);
    // Not overlapped with compute: an upper bound. Ranks that time-share their cores wait for
    // descheduled peers: the collectives stretch by the sharing factor (the compute above is
    // already bounded by the cores).
    e.iteration_ms += step_work * forwards * CommSeconds(*comm, link, a.link_gb_per_s) * 1000 *
                      PlannedSharing(c, a);
  }

  const double bytes = BytesPerElement(c.precision);
  // Weights: replicated on every rank, except that PipeFusion splits the blocks. quant: the
  // FP8 layers' weights take one byte a parameter, and their high-precision copy is freed
  // unless a per-step schedule runs them in high precision too.
  const double fp8_parameters =
      c.quant != Quantization::kNone ? double(Fp8ParameterCount(*model)) : 0.0;
  const double high_parameters =
      double(ParameterCount(*model)) - (c.schedule.empty() ? fp8_parameters : 0.0);
  // Tensor parallelism keeps 1 / tp of the blocks' attention and MLP weights on a rank
  // (the same layers FP8 quantizes, Fp8ParameterCount; tp and quant do not combine yet).
  const double tp_shared = c.tp > 1 ? double(Fp8ParameterCount(*model)) * bytes : 0.0;
  const double weights =
      ((high_parameters * bytes + fp8_parameters) - tp_shared * (1.0 - 1.0 / c.tp)) / c.pipefusion;
  // Activations: a working set of about 16 hidden-wide tensors over this rank's tokens (flash
  // attention keeps scores out of memory), for the samples this rank runs; of which tensor
  // parallelism splits the 12 inside attention and the MLP (q, k, v, the attention's output,
  // the MLP's 4-wide hidden and their copies) and keeps the residual stream's 4 whole.
  const double resident_tokens =
      double(ImageTokens(*model, c.image_shape()) + model->text_tokens) / c.sequence_size();
  const double activations =
      (4.0 + 12.0 / c.tp) * resident_tokens * model->hidden * rank_rows * bytes;
  double working = activations;
  if (c.scope == Scope::kPipeline && model->video()) {
    const double decode =
        VaeDecodeBytes(*model, c.image_shape(), bytes, c.vae_tile, c.vae_parallel) * c.batch;
    e.decode_mb = decode / 1048576.0;
    working = std::max(working, decode);
  }
  e.memory_mb = (weights + working) / 1048576.0;
  e.trial_s = (a.calibration ? a.calibration->startup_s : a.startup_s) +
              (c.warmup + TimedIterations(c, e.iteration_ms)) * e.iteration_ms / 1000;
  return e;
}

SweepPlan PlanSweep(const SweepSpec& spec, const Capacity& capacity, const PlanAssumptions& a,
                    const std::filesystem::path& db) {
  SweepPlan plan = ClassifiedTrials(spec, capacity);
  EstimateTrials(plan, spec, a, Evidence(db, a.device));
  return plan;
}

SweepPlan PlanSweepForPolicy(const SweepSpec& spec, const Capacity& capacity,
                             PlanAssumptions assumptions, const std::filesystem::path& db,
                             bool pack, bool show_pack) {
  // Expanded and judged once; only the estimates differ between the two policies.
  SweepPlan plan = ClassifiedTrials(spec, capacity);
  const Evidence evidence(db, assumptions.device);
  if (pack) {
    assumptions.pack_slots = capacity.slots;
    EstimateTrials(plan, spec, assumptions, evidence);
    return plan;
  }
  double pack_alternative_s = 0;
  if (show_pack && capacity.slots > 1) {
    PlanAssumptions packed = assumptions;
    packed.pack_slots = capacity.slots;
    EstimateTrials(plan, spec, packed, evidence);
    pack_alternative_s = plan.packed_wall_s;
  }
  assumptions.pack_slots = 0;
  EstimateTrials(plan, spec, assumptions, evidence);
  plan.pack_alternative_s = pack_alternative_s;
  return plan;
}

}  // namespace ditbench
