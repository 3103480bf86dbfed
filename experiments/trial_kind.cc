#include "experiments/trial_kind.h"

#include <cstdint>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "experiments/trial_requests.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

std::optional<std::string> NoRule(const TrialConfig&) { return std::nullopt; }
void NoJudge(const TrialConfig&, const Capacity&, const RequestList*, TrialVerdict&) {}

// A served trial's load, its fields as the sweep set them with the trial's shape resolved.
std::optional<std::string> ServedLoadProblem(const TrialConfig& c) {
  if (auto problem = ServeLoadProblem(TrialServeLoad(c))) return "serve: " + *problem;
  return std::nullopt;
}

// A serving trial whose rank file would hold more JSON values than ingest reads
// (kMaxRankFileValues): refused before launch rather than served to the end and lost at ingest.
// Counted as if one rank served every request (one replica may, while the others are slow):
// each request RankFileValuesPerRequest of the stages its shape times (its steps, each step's
// blocks under profile_blocks, the decode of scope pipeline). `given`: the materialized
// requests, or null to count them from the load. REQUIRES: `shapes` valid (every given
// request's shape indexes them), the model resolves. Throws what TrialRequests throws.
std::optional<std::string> RankFileProblem(const TrialConfig& c,
                                           const std::vector<RequestShape>& shapes,
                                           const RequestList* given) {
  std::string error;
  const auto model = ResolveModel(c.model, c.model_overrides, &error);
  const std::uint64_t blocks = c.profile_blocks && model ? model->total_blocks() : 0;
  const auto values = [&](const RequestShape& shape) {
    const auto steps = static_cast<std::uint64_t>(shape.steps);
    return RankFileValuesPerRequest(steps * (1 + blocks) + (c.scope == Scope::kPipeline ? 1 : 0));
  };
  std::uint64_t most = 0;  // the values of a request of the costliest shape
  int most_steps = 0;
  for (const RequestShape& shape : shapes)
    if (values(shape) > most) most = values(shape), most_steps = shape.steps;
  const std::uint64_t room = kMaxRankFileValues - kRankFileOtherValues;
  const ServeLoad load = TrialServeLoad(c);
  const bool traced = load.arrivals == ArrivalKind::kTrace;
  std::uint64_t count = static_cast<std::uint64_t>(load.requests) + load.warmup_requests;
  if (!given && !traced && load.requests > 0 && count * most <= room) return std::nullopt;
  std::uint64_t total = 0;  // the load's own requests: a trace's, or those generated
  if (given) {
    count = given->requests.size();
    for (const Request& request : given->requests) total += values(shapes.at(request.shape));
  } else if (load.of_capacity != 0 && load.rate_per_s == 0) {
    total = count * most;  // a rate not known yet: every request as one of the costliest shape
  } else if (traced) {
    count = 0;
    for (const RequestShape& shape : shapes) {  // a trace's shape's weight: its requests
      count += static_cast<std::uint64_t>(shape.weight);
      total += static_cast<std::uint64_t>(shape.weight) * values(shape);
    }
  } else {
    const std::vector<Request> requests = TrialRequests(c);
    count = requests.size();
    for (const Request& request : requests) total += values(shapes.at(request.shape));
  }
  if (total <= room) return std::nullopt;
  return fmt::format(
      "serve: {} requests of up to {} steps{} would write about {} JSON values to a rank file, "
      "more than the {} its requests may take (ingest reads at most {}); expected at most {} "
      "requests of {} steps ('requests' with 'warmup_requests', or fewer 'steps'{})",
      count, most_steps, blocks > 0 ? fmt::format(" of {} profiled blocks", blocks) : "", total,
      room, kMaxRankFileValues, room / most, most_steps,
      blocks > 0 ? ", or profile_blocks: false" : "");
}

// A served trial: every shape its requests ask for, as the trial that times it alone, then the
// size of its rank files.
void JudgeServed(const TrialConfig& config, const Capacity& capacity, const RequestList* given,
                 TrialVerdict& v) {
  std::vector<RequestShape> shapes;
  try {
    shapes = given ? given->shapes : TrialShapes(config);
  } catch (const std::exception& error) {
    v.invalid = fmt::format("serve: {}", error.what());
    return;
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const TrialVerdict shape = Judge(ShapeTrial(config, shapes[i]), capacity);
    const std::string where =
        fmt::format("serve: request shape {} ({})", i, RequestShapeText(shapes[i]));
    if (shape.invalid)
      v.invalid = fmt::format("{}: {}", where, *shape.invalid);
    else if (shape.unsupported)
      v.unsupported = fmt::format("{}: {}", where, *shape.unsupported);
    if (v.invalid || v.unsupported) return;
  }
  try {
    v.invalid = RankFileProblem(config, shapes, given);
  } catch (const std::exception& error) {
    v.invalid = fmt::format("serve: {}", error.what());
  }
}

}  // namespace

const std::vector<TrialKindRow>& TrialKinds() {
  static const std::vector<TrialKindRow> kinds = {
      {TrialKind::kTimed, "timed", false, "", NoRule, NoJudge},
      {TrialKind::kServed, "served", true,
       "serve: ditbench's own worker serves requests; a {} workload's program times its own",
       ServedLoadProblem, JudgeServed},
  };
  return kinds;
}

const TrialKindRow& KindRow(TrialKind kind) {
  for (const TrialKindRow& row : TrialKinds())
    if (row.kind == kind) return row;
  throw std::logic_error("a trial kind without a row in TrialKinds()");
}

TrialKind KindOf(const TrialConfig& config) {
  return config.serve ? TrialKind::kServed : TrialKind::kTimed;
}

std::string_view TrialKindName(TrialKind kind) { return KindRow(kind).name; }

}  // namespace ditbench
