#include "plan/cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "experiments/trial_rows.h"
#include "model_zoo/shapes/memory_traffic.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"
#include "plan/comm_volume.h"

namespace ditbench {
namespace {

constexpr double kMiB = 1048576.0;

// The index of each term in CostFeatures (CostTermNames' order).
enum TermIndex : std::size_t {
  kOverhead,
  kRankCompute,
  kSharedCompute,
  kRankScores,
  kSharedScores,
  kRankActivations,
  kSharedActivations,
  kBlockCalls,
  kAllToAllMessages,
  kAllToAllMib,
  kRingCalls,
  kRingMib,
  kGatherCalls,
  kGatherMib,
  kDecode,
  kSharedDecode,
  kOversubscribedCompute,
  kOversubscribedBlockCalls,
  kOversubscribedCalls,
  kFp8Compute,
  kFlashScores,
  kEfficientScores,
  kCudnnScores,
  kMathScores,
  kAllReduceCalls,  // tensor parallelism's all-reduces
  kAllReduceMib,
  kTerms
};

// The term of the scores a forced attention kernel computes (kAuto: none).
std::optional<TermIndex> KernelScoresTerm(AttentionBackend backend) {
  switch (backend) {
    case AttentionBackend::kFlash:
      return kFlashScores;
    case AttentionBackend::kEfficient:
      return kEfficientScores;
    case AttentionBackend::kCudnn:
      return kCudnnScores;
    case AttentionBackend::kMath:
      return kMathScores;
    case AttentionBackend::kAuto:
      break;
  }
  return std::nullopt;
}

// Start-up features: a constant, per rank, per billion parameters, per rank and billion.
std::vector<double> StartupFeatures(const TrialConfig& c) {
  std::string unused;
  const auto model = ResolveModel(c.model, c.model_overrides, &unused);
  const double params = model ? double(ParameterCount(*model)) / 1e9 : 0.0;
  const double ranks = c.world_size();
  return {1.0, ranks, params, ranks * params};
}

CostPrediction Interval(const LeastSquaresFit& fit, const std::vector<double>& x) {
  CostPrediction p;
  p.value = std::max(0.0, fit.Predict(x));
  // Relative noise of one trial (the fit's weights are 1 / y^2) and the coefficients' own.
  const double noise = fit.sigma * p.value;
  const double sd = std::sqrt(noise * noise + fit.PredictionVariance(x));
  const double t = StudentT95(fit.degrees_of_freedom);
  p.low = std::max(0.0, p.value - t * sd);
  p.high = p.value + t * sd;
  return p;
}

}  // namespace

const std::vector<std::string>& CostTermNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n(kTerms);
    n[kOverhead] = "overhead_ms";
    n[kRankCompute] = "rank_compute_ms_per_gflop";
    n[kSharedCompute] = "shared_compute_ms_per_gflop";
    n[kRankScores] = "rank_scores_ms_per_million";
    n[kSharedScores] = "shared_scores_ms_per_million";
    n[kRankActivations] = "rank_activations_ms_per_million";
    n[kSharedActivations] = "shared_activations_ms_per_million";
    n[kBlockCalls] = "ms_per_block_call";
    n[kAllToAllMessages] = "all_to_all_ms_per_message";
    n[kAllToAllMib] = "all_to_all_ms_per_mib";
    n[kRingCalls] = "ring_ms_per_call";
    n[kRingMib] = "ring_ms_per_mib";
    n[kGatherCalls] = "gather_ms_per_call";
    n[kGatherMib] = "gather_ms_per_mib";
    n[kDecode] = "decode_ms_per_gflop";
    n[kSharedDecode] = "shared_decode_ms_per_gflop";
    n[kOversubscribedCompute] = "oversubscribed_compute_ms_per_gflop";
    n[kOversubscribedBlockCalls] = "oversubscribed_ms_per_block_call";
    n[kOversubscribedCalls] = "oversubscribed_ms_per_call";
    n[kFp8Compute] = "fp8_compute_ms_per_gflop";
    n[kFlashScores] = "flash_extra_ms_per_million_scores";
    n[kEfficientScores] = "efficient_extra_ms_per_million_scores";
    n[kCudnnScores] = "cudnn_extra_ms_per_million_scores";
    n[kMathScores] = "math_extra_ms_per_million_scores";
    n[kAllReduceCalls] = "all_reduce_ms_per_call";
    n[kAllReduceMib] = "all_reduce_ms_per_mib";
    return n;
  }();
  return names;
}

std::optional<std::vector<double>> CostFeatures(const TrialConfig& c,
                                                std::optional<double> counted_comm_mb,
                                                double sharing) {
  if (!TraitsOf(c.workload).builtin_model) return std::nullopt;
  std::string unused;
  const auto model = ResolveModel(c.model, c.model_overrides, &unused);
  if (!model) return std::nullopt;
  const double forwards = c.scope == Scope::kForward ? 1 : c.steps;
  const int samples = RowsPerForward(c, *model);
  // Padded heads (pad_heads) attend like the others: their FLOPs are run.
  const double gflop = forwards *
                       (ForwardFlops(*model, c.image_shape(), samples) +
                        HeadPaddingFlops(*model, c.image_shape(), samples, c.tp, c.ulysses)) /
                       1e9;
  const ForwardElements elements = ForwardMemoryElements(*model, c.image_shape(), samples);
  const double mscores = forwards * elements.scores / 1e6;
  const double mactivations = forwards * elements.activations / 1e6;
  const double ranks = c.world_size();
  // PipeFusion: synchronous steps run the stages one after another; patch steps fill and
  // drain a pipeline of M patches through P stages (as AnalyticEstimate).
  const double p = c.pipefusion, m = c.effective_pipefusion_patches();
  const double sync = std::min<double>(std::max(c.pipefusion_warmup_steps, 0), forwards);
  const double bubble = p > 1 ? (sync * p + (forwards - sync) * (m + p - 1) / m) / forwards : 1;
  const double blocks = model->total_blocks();
  const double block_calls =
      p > 1 ? blocks / p * (sync * p + (forwards - sync) * (m + p - 1)) : blocks * forwards;

  CommPerStep comm = CommByKindPerStep(*model, c).value_or(CommPerStep{});
  if (counted_comm_mb && comm.total_bytes > 0) {
    const double k = *counted_comm_mb * kMiB / comm.total_bytes;
    for (double& bytes : comm.bytes) bytes *= k;
  }
  const auto calls = [&](Collective kind) { return forwards * comm.calls[std::size_t(kind)]; };
  const auto mib = [&](Collective kind) { return forwards * comm.bytes[std::size_t(kind)] / kMiB; };
  // The decode's GFLOP (model_zoo/shapes/vae_shapes.h): decoders differ in cost per pixel
  // (AutoencoderKLHunyuanVideo's about twice AutoencoderKLWan's), so one price per megapixel
  // would fit a campaign of both poorly.
  const double decode_gflop =
      c.scope == Scope::kPipeline ? double(c.batch) * VaeDecodeFlops(*model, c.image_shape()) / 1e9
                                  : 0.0;
  // Time-sharing: a rank runs 1 / sharing of the time, so whatever it does alone (its compute,
  // its block executions, its collectives, which wait for peers that are descheduled) takes
  // longer. The stretch beyond what the other terms price is fitted, not assumed.
  const double stretch = std::max(sharing, 1.0) - 1;
  const double collectives = calls(Collective::kAllToAll) + calls(Collective::kSendRecv) +
                             calls(Collective::kAllGather) + calls(Collective::kAllReduce);
  // An all-to-all among the U ranks of a Ulysses group (the only all-to-alls) exchanges a
  // message with each of its U - 1 peers: its latency grows with them.
  const double all_to_all_messages = calls(Collective::kAllToAll) * (c.ulysses - 1);
  // The steps that run the trial's kernel and FP8 layers (a schedule keeps the others in high
  // precision): FP8 GEMMs, 2 x tokens x the FP8 layers' parameters per sample and forward,
  // leave the compute terms for a price of their own (their tensor cores' rate); a forced
  // kernel's scores cost what `auto`'s do plus a non-negative extra of that kernel (SDPA's own
  // choice is taken as the fastest).
  const double low_steps =
      std::max(0.0, forwards - c.schedule.high_precision_first - c.schedule.high_precision_last);
  const double tokens = double(ImageTokens(*model, c.image_shape())) +
                        (model->text_attention == TextAttention::kJoint ? model->text_tokens : 0);
  const double fp8_gflop =
      c.quant != Quantization::kNone
          ? 2.0 * tokens * double(Fp8ParameterCount(*model)) * samples * low_steps / 1e9
          : 0.0;
  std::vector<double> x(kTerms, 0.0);
  x[kOverhead] = 1.0;
  x[kRankCompute] = (gflop - fp8_gflop) / ranks * bubble;
  x[kSharedCompute] = (gflop - fp8_gflop) * bubble;
  x[kFp8Compute] = fp8_gflop / ranks * bubble;
  if (const auto kernel = KernelScoresTerm(c.attention))
    x[*kernel] = mscores * (forwards > 0 ? low_steps / forwards : 0.0) / ranks * bubble;
  x[kRankScores] = mscores / ranks * bubble;
  x[kSharedScores] = mscores * bubble;
  x[kRankActivations] = mactivations / ranks * bubble;
  x[kSharedActivations] = mactivations * bubble;
  x[kBlockCalls] = block_calls;
  x[kAllToAllMessages] = all_to_all_messages;
  x[kAllToAllMib] = mib(Collective::kAllToAll);
  x[kRingCalls] = calls(Collective::kSendRecv);
  x[kRingMib] = mib(Collective::kSendRecv);
  x[kGatherCalls] = calls(Collective::kAllGather);
  x[kGatherMib] = mib(Collective::kAllGather);
  x[kAllReduceCalls] = calls(Collective::kAllReduce);
  x[kAllReduceMib] = mib(Collective::kAllReduce);
  // A decode every rank runs whole, or vae_parallel ranks split (a share each, the machine
  // doing it once), with the split's collectives among the gathers.
  const double split = std::max(1, c.vae_parallel);
  x[kDecode] = decode_gflop * VaeSplitShare(*model, c.image_shape(), c.vae_tile, c.vae_parallel);
  x[kSharedDecode] = c.vae_parallel > 1 ? decode_gflop : decode_gflop * ranks;
  if (c.scope == Scope::kPipeline && c.vae_parallel > 1) {
    const ImageShape shape = c.image_shape();
    x[kGatherCalls] += c.vae_tile > 0 ? 2.0 * VaeDecodeTiles(*model, shape, c.vae_tile)
                                      : double(c.batch) * VaeSplitCollectives(*model, shape);
    x[kGatherMib] += 3.0 * std::max(1, shape.frames) * shape.width * shape.height *
                     BytesPerElement(c.precision) * c.batch * (split - 1) / split / kMiB;
  }
  x[kOversubscribedCompute] = stretch * gflop / ranks * bubble;
  x[kOversubscribedBlockCalls] = stretch * block_calls;
  x[kOversubscribedCalls] = stretch * collectives;
  return x;
}

namespace {
constexpr std::size_t kReducedTerms = 9;  // ReducedFeatures' length
std::vector<double> ReducedFeatures(const std::vector<double>& x) {
  // overhead, rank compute, shared compute, collectives of every kind (an all-to-all's
  // messages), MiB of every kind, the two decode terms, and time-sharing's compute and
  // collectives. Block calls and the elements read and written go: too close to the compute
  // terms with few trials.
  // FP8 GEMMs (a GPU's) join the per-rank compute; forced kernels' extras go.
  return {x[kOverhead],
          x[kRankCompute] + x[kFp8Compute],
          x[kSharedCompute],
          x[kAllToAllMessages] + x[kRingCalls] + x[kGatherCalls] + x[kAllReduceCalls],
          x[kAllToAllMib] + x[kRingMib] + x[kGatherMib] + x[kAllReduceMib],
          x[kDecode],
          x[kSharedDecode],
          x[kOversubscribedCompute],
          x[kOversubscribedCalls]};
}

// The observations a fit can use (a positive latency, features the shapes know): their
// features, latencies and weights (1 / latency^2: relative errors), and which observation each
// row is. Computed once per set of observations (features come from the model's shapes).
struct IterationRows {
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  std::vector<std::size_t> of;
};

IterationRows IterationRowsOf(const std::vector<CostObservation>& observations) {
  IterationRows rows;
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const CostObservation& o = observations[i];
    if (!(o.latency_ms > 0)) continue;
    auto x = CostFeatures(o.config, o.comm_mb_per_step, o.sharing);
    if (!x) continue;
    rows.x.push_back(std::move(*x));
    rows.y.push_back(o.latency_ms);
    rows.w.push_back(1.0 / (o.latency_ms * o.latency_ms));
    rows.of.push_back(i);
  }
  return rows;
}

// The iteration terms fitted on `x`, and whether reduced: a term per collective kind when that
// leaves 3 degrees of freedom, else one latency and one bandwidth for every kind; nullopt with
// fewer than kMinimumTrialsToFit rows or when neither keeps 3 degrees of freedom.
std::optional<std::pair<LeastSquaresFit, bool>> FitIteration(
    const std::vector<std::vector<double>>& x, const std::vector<double>& y,
    const std::vector<double>& w) {
  if (x.size() < kMinimumTrialsToFit) return std::nullopt;
  std::optional<LeastSquaresFit> fit = FitNonNegative(x, y, w);
  if (fit && fit->degrees_of_freedom >= 3) return std::make_pair(std::move(*fit), false);
  std::vector<std::vector<double>> reduced;
  for (const auto& row : x) reduced.push_back(ReducedFeatures(row));
  fit = FitNonNegative(reduced, y, w);
  if (!fit || fit->degrees_of_freedom < 3) return std::nullopt;
  return std::make_pair(std::move(*fit), true);
}

// FitIteration from the rows' sums (stats/least_squares.h: NormalEquations), per collective
// kind and reduced: leave-one-out takes one row out of them in O(terms^2) per refit.
struct IterationSums {
  NormalEquations full{kTerms}, reduced{kReducedTerms};
  void Add(const std::vector<double>& x, double y, double w, double sign = 1) {
    full.Add(x, y, w, sign);
    reduced.Add(ReducedFeatures(x), y, w, sign);
  }
};

std::optional<std::pair<LeastSquaresFit, bool>> FitIteration(const IterationSums& sums) {
  if (sums.full.rows < kMinimumTrialsToFit) return std::nullopt;
  std::optional<LeastSquaresFit> fit = FitNonNegative(sums.full);
  if (fit && fit->degrees_of_freedom >= 3) return std::make_pair(std::move(*fit), false);
  fit = FitNonNegative(sums.reduced);
  if (!fit || fit->degrees_of_freedom < 3) return std::nullopt;
  return std::make_pair(std::move(*fit), true);
}
}  // namespace

std::vector<double> CostModel::Features(const std::vector<double>& full) const {
  return reduced_ ? ReducedFeatures(full) : full;
}

std::optional<CostModel> CostModel::Fit(const std::vector<CostObservation>& observations) {
  const IterationRows rows = IterationRowsOf(observations);
  auto fit = FitIteration(rows.x, rows.y, rows.w);
  if (!fit) return std::nullopt;
  CostModel model;
  model.iteration_ = std::move(fit->first);
  model.reduced_ = fit->second;
  model.trials_ = rows.x.size();
  std::vector<std::vector<double>> startup_rows;
  std::vector<double> startup_y, startup_w;
  for (const std::size_t i : rows.of) {
    const CostObservation& o = observations[i];
    if (o.startup_s && *o.startup_s > 0) {
      startup_rows.push_back(StartupFeatures(o.config));
      startup_y.push_back(*o.startup_s);
      startup_w.push_back(1.0 / (*o.startup_s * *o.startup_s));
    }
  }
  if (startup_rows.size() >= 3) model.startup_ = FitNonNegative(startup_rows, startup_y, startup_w);
  return model;
}

std::optional<CostPrediction> CostModel::Iteration(const TrialConfig& config,
                                                   std::optional<double> counted_comm_mb,
                                                   double sharing) const {
  const auto x = CostFeatures(config, counted_comm_mb, sharing);
  if (!x) return std::nullopt;
  return Interval(iteration_, Features(*x));
}

std::optional<CostPrediction> CostModel::Startup(const TrialConfig& config) const {
  if (!startup_) return std::nullopt;
  return Interval(*startup_, StartupFeatures(config));
}

std::vector<CostModel::Term> CostModel::Terms() const {
  std::vector<Term> terms;
  const double t = StudentT95(iteration_.degrees_of_freedom);
  static const std::vector<std::string> reduced = {
      "overhead_ms",    "rank_compute_ms_per_gflop", "shared_compute_ms_per_gflop",
      "ms_per_collective", "ms_per_mib",             "decode_ms_per_gflop",
      "shared_decode_ms_per_gflop", "oversubscribed_compute_ms_per_gflop",
      "oversubscribed_ms_per_call"};
  const std::vector<std::string>& names = reduced_ ? reduced : CostTermNames();
  for (std::size_t j = 0; j < names.size(); ++j) {
    const double value = iteration_.coefficients[j], se = iteration_.StandardError(j);
    terms.push_back({names[j], {value, value - t * se, value + t * se},
                     bool(iteration_.active[j])});
  }
  return terms;
}

LooReport LeaveOneOut(const std::vector<CostObservation>& observations) {
  LooReport report;
  std::vector<double> errors;
  // The features of every observation once, and the sums of all their rows: each refit takes
  // its rows (its own and its seed twins') out of the sums (stats/least_squares.h), so n
  // refits cost O(n) and not O(n^2).
  const IterationRows all = IterationRowsOf(observations);
  IterationSums sums;
  for (std::size_t r = 0; r < all.x.size(); ++r) sums.Add(all.x[r], all.y[r], all.w[r]);
  std::vector<std::optional<std::size_t>> row_of(observations.size());
  for (std::size_t r = 0; r < all.of.size(); ++r) row_of[all.of[r]] = r;
  // The rows of each configuration (ConfigurationKey): a trial's seed twins leave with it.
  std::map<std::string, std::vector<std::size_t>> rows_of_configuration;
  std::vector<const std::vector<std::size_t>*> twins(all.of.size());
  for (std::size_t r = 0; r < all.of.size(); ++r)
    rows_of_configuration[ConfigurationKey(observations[all.of[r]].config)].push_back(r);
  for (const auto& [configuration, rows] : rows_of_configuration)
    for (const std::size_t r : rows) twins[r] = &rows;
  std::optional<std::optional<std::pair<LeastSquaresFit, bool>>> on_all;  // computed once
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const CostObservation& o = observations[i];
    LooEntry entry{o.trial_key, o.latency_ms, std::nullopt};
    std::optional<std::pair<LeastSquaresFit, bool>> fit;
    std::optional<std::vector<double>> x;
    if (const auto r = row_of[i]) {
      IterationSums others = sums;
      for (const std::size_t t : *twins[*r])
        others.Add(all.x[t], all.y[t], all.w[t], -1);
      fit = FitIteration(others);
      x = all.x[*r];
    } else {  // not among the rows: predicted by the fit on all of them
      if (!on_all) on_all = FitIteration(sums);
      fit = *on_all;
      x = CostFeatures(o.config, o.comm_mb_per_step, o.sharing);
    }
    if (fit && x) entry.predicted = Interval(fit->first, fit->second ? ReducedFeatures(*x) : *x);
    if (entry.predicted && entry.measured_ms > 0) {
      errors.push_back(std::abs(entry.relative_error()));
      ++report.predicted;
    }
    report.entries.push_back(std::move(entry));
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    const std::size_t n = errors.size();
    report.median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    report.max_abs_error = errors.back();
  }
  return report;
}

}  // namespace ditbench
