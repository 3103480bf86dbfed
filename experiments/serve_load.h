// Serving under load (issue 39): how requests arrive at a served model. A `ServeLoad` says
// when requests come (open-loop arrivals at a rate, or a closed loop of a fixed concurrency),
// what they ask for (a weighted mix of request shapes), how many, and what counts as served
// well (slo_scale). The value types only: what turns a load into its requests (the generator,
// the trace reader) is experiments/arrivals.h, which a trial's own header does not pull in.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

enum class ArrivalKind {
  kPoisson,   // exponential gaps: memoryless arrivals at rate_per_s
  kGamma,     // gamma gaps of mean 1 / rate_per_s and squared coefficient of variation
              // `burstiness` (gamma shape 1 / burstiness): 1 is Poisson, above 1 burstier,
              // towards 0 steadier
  kConstant,  // one request every 1 / rate_per_s seconds exactly
  kTrace,     // arrival times and shapes from a file (ReadArrivalTrace)
};

// A request shape's most frames and steps (a mix entry's, a trace line's); its width and height
// range as a resolution's (experiments/resolution.h).
inline constexpr int kMaxRequestFrames = 100000, kMaxRequestSteps = 10000;

// One kind of request. Ranges as the sweep's `resolution`, `frames` and `steps` take them.
// In a sweep's `mix` a field may be left to the trial (kTrialsOwn): width 0 takes the trial's
// resolution (width and height), frames -1 its frames, steps 0 its steps (TrialServeLoad).
struct RequestShape {
  int width = 1024, height = 1024;
  int frames = 0;  // 0: an image
  int steps = 20;
  double weight = 1;  // relative share of requests in a mix (any positive scale)
  bool operator==(const RequestShape&) const = default;
};

struct ServeLoad {
  ArrivalKind arrivals = ArrivalKind::kPoisson;
  double rate_per_s = 0;  // open loop: mean requests per second
  double burstiness = 1;  // kGamma only: the gaps' CV^2
  // Closed loop when > 0: at most this many requests in flight, the next one issued when one
  // completes, and rate_per_s 0. Exactly one of rate_per_s and concurrency is set.
  int concurrency = 0;
  // A rate sweep (`rate: sweep, points: N`, 2 to 16): the sweep's trial stands for a capacity
  // trial, a closed loop of `concurrency` requests (2 per replica unless given), and N open-loop
  // trials at shares of the throughput it measures, evenly from 0.1 to 0.9 (ExpandRateSweeps,
  // experiments/sweep_expand.h). Only a sweep's load has it: no trial is run with it set.
  int rate_points = 0;
  // An open loop whose rate is a share (0.01 to 1) of a capacity trial's measured throughput
  // (`rate: {of_capacity: F, capacity_concurrency: C}`): the same trial with its load a closed
  // loop of C requests (CapacityTrial, experiments/trial.h). The coordinator reads that trial's
  // requests_per_s when it launches this one and sets rate_per_s from it (0 until then); the
  // trial key holds the share, never the rate it came to.
  double of_capacity = 0;
  int capacity_concurrency = 0;
  // The shapes requests draw from, by weight. A sweep's `serve` leaves it empty (every request
  // of the trial's own shape) or lists shapes whose unset fields are the trial's.
  std::vector<RequestShape> mix;
  // How many requests: `requests` after the warm-up ones, or all that arrive before
  // duration_s (warm-up included), or whichever ends first when both are set. A closed loop
  // needs `requests`.
  int requests = 0;
  double duration_s = 0;
  int warmup_requests = 0;  // the first requests, served but left out of the summary
  // A request meets its service-level objective when its latency is at most slo_scale times
  // its latency alone on an idle replica.
  double slo_scale = 5;
  // Early stopping (`early_stop: {percentile, within}`): once the 95% order-statistic interval
  // of this latency percentile over the timed requests served so far is within `stop_within`
  // of its estimate (high - low <= stop_within x estimate), no further request is taken, and
  // the requests served are a prefix of the load's. 0: serve every request.
  double stop_percentile = 0;
  double stop_within = 0.1;
  int replicas = 1;             // copies of the model serving one queue
  std::filesystem::path trace;  // kTrace: the file
  // kTrace: the SHA-256 of the trace's bytes (64 hex digits) as the sweep read them
  // (ArrivalTraceSha256), or empty when not taken. The trial key holds it instead of the path
  // (experiments/trial_identity.cc), and a trace whose bytes have changed since is refused
  // (TrialRequests).
  std::string trace_sha256;
  std::uint64_t seed = 0;
  bool operator==(const ServeLoad&) const = default;
};

inline constexpr const char* kEarlyStopExpected =
    "serve.early_stop as a map {percentile: P, within: W}: stop once the 95% interval of the "
    "Pth latency percentile (50 to 99.9) is within W (0.001 to 1) of it";

// A mix entry's field left to the trial (RequestShape's comment).
inline constexpr RequestShape kTrialsOwn{0, 0, -1, 0, 1};

// The sweep's `serve` (experiments/trial.h, TrialConfig::serve): what a trial's map sets of a
// load. Its requests take the trial's own shape unless `mix` lists shapes, each a map
// {resolution, frames, steps, weight} whose missing fields are the trial's; its replicas are
// the trial's `dp` groups and its seed the trial's (TrialServeLoad); a relative trace is
// anchored at the sweep's folder.
inline constexpr const char* kServeExpected =
    "none, or a map {arrivals: poisson | gamma | constant | trace, rate, burstiness, "
    "concurrency, requests, duration_s, warmup_requests, slo_scale, early_stop, mix, trace, "
    "points}";
inline constexpr const char* kRateExpected =
    "serve.rate as requests per second, 'sweep' (with points: N, 2 to 16, and requests), or "
    "{of_capacity: F (0.01 to 1), capacity_concurrency: C} (with requests)";
// The most open-loop rates one rate sweep makes.
inline constexpr int kMaxRatePoints = 16;
// The capacity trial's closed loop of a rate sweep that names no concurrency: requests in
// flight per replica, enough to keep every replica busy while one request's answer is read.
inline constexpr int kCapacityConcurrencyPerReplica = 2;
inline constexpr const char* kMixEntryExpected =
    "a map {resolution: N or WxH, frames: N, steps: N, weight: W} (missing fields are the "
    "trial's; weight 1 unless given)";
// Parses `value` ("none", or a map of the keys above) into `*load` (nullopt for none). On
// failure returns false with what was expected in `*expected`, naming the key and its range.
bool ParseServeLoad(const nlohmann::json& value, std::optional<ServeLoad>* load,
                    std::string* expected);
// The canonical form of the fields a sweep sets, the inverse of ParseServeLoad: the trial key's
// `serve` (sorted keys; a field at its default left out).
nlohmann::json ServeLoadJson(const ServeLoad& load);

// A rate sweep's open-loop shares of capacity: `points` of them, evenly from 0.1 to 0.9
// (0.5 alone for one point). REQUIRES: 1 <= points <= kMaxRatePoints.
std::vector<double> RateSweepShares(int points);

// The most requests one load may make (a trace's lines included).
inline constexpr int kMaxServeRequests = 1'000'000;
// The longest a load may last, in seconds: a trace's last arrival, a generated load's
// duration_s, or the expected span of its requests at its rate.
inline constexpr double kMaxServeSeconds = 1e6;
// The steadiest gamma arrivals: burstiness (the gaps' CV^2) from this up to 100. Below it the
// gaps are constant to a part in a thousand (use arrivals: constant), and the gamma's shape,
// 1 / burstiness, would grow past what its sampler draws in bounded time.
inline constexpr double kMinBurstiness = 1e-3;

// The most JSON values a rank file may hold, kept or not: what ingest reads of one
// (contract/worker_contract.h, ReadRankResult). A serving trial's rank file grows with its
// requests, so a load is held to it before launch (RankFileValuesPerRequest).
inline constexpr std::uint64_t kMaxRankFileValues = 4'000'000;
// A rank file's JSON values besides its requests' (its header, environment, clocks and steps):
// the room a serving trial's requests leave unused.
inline constexpr std::uint64_t kRankFileOtherValues = 100'000;
// The JSON values one served request adds to the rank file of a rank that served it, as
// contract/worker_contract.cc writes them: its record (an object of 7 fields: 8 values; the
// replica's leader only, counted for every rank) and its samples, each an object of 4 fields
// (5 values): the latency, the queue wait and the service, and one per stage it timed
// (`stages`: its denoising steps, its decode, its blocks).
constexpr std::uint64_t RankFileValuesPerRequest(std::uint64_t stages) {
  return 8 + 5 * (3 + stages);
}
// The most shapes one mix may list, or one trace may use: each is a set of inputs every rank
// keeps resident for the whole trial.
inline constexpr int kMaxRequestShapes = 16;

// "512x512, 10 steps" or "1280x720, 81 frames, 50 steps": a shape as labels show it.
std::string RequestShapeText(const RequestShape& shape);

// One request: its position in arrival order (from 0; warm-up requests first), when it
// arrives, seconds from the start, and its shape, an index into the load's mix (or the
// trace's shapes).
struct Request {
  int index = 0;
  double arrival_s = 0;
  int shape = 0;
  bool operator==(const Request&) const = default;
};

// A served trial's requests as its coordinator materialized them, once, into the trial's file
// (contract/worker_contract.h, TrialFile::requests): the shapes Request::shape indexes and the
// requests in arrival order. At run time this is the one source of a trial's load: its worker
// ranks serve it and ingest checks and summarizes against it, none of them generating it again
// (experiments/trial_requests.h makes it, before a trial file exists).
struct RequestList {
  std::vector<RequestShape> shapes;
  std::vector<Request> requests;
  bool empty() const { return requests.empty(); }
  bool operator==(const RequestList&) const = default;
};

// What is wrong with `load`, as one line naming the field ("'rate_per_s' is 0; expected ..."),
// or nullopt. A trace's own content is checked by ReadArrivalTrace.
std::optional<std::string> ServeLoadProblem(const ServeLoad& load);

}  // namespace ditbench
