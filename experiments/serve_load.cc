#include "experiments/serve_load.h"

#include <cmath>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/did_you_mean.h"
#include "experiments/resolution.h"

namespace ditbench {
namespace {

constexpr int kMinSide = kMinResolutionSide, kMaxSide = kMaxResolutionSide,
              kMaxFrames = kMaxRequestFrames, kMaxSteps = kMaxRequestSteps;
// The lowest rate makes one request in the longest load: a lower one never makes a second.
constexpr double kMinRatePerS = 1 / kMaxServeSeconds, kMaxRatePerS = 1e6, kMaxBurstiness = 100;

std::optional<std::string> ShapeProblem(const RequestShape& shape, const std::string& where) {
  const auto outside = [](int value, int low, int high) { return value < low || value > high; };
  if (outside(shape.width, kMinSide, kMaxSide) || outside(shape.height, kMinSide, kMaxSide))
    return fmt::format("'{}' is {}x{}; expected a width and height from {} to {}", where,
                       shape.width, shape.height, kMinSide, kMaxSide);
  if (outside(shape.frames, 0, kMaxFrames))
    return fmt::format("'{}.frames' is {}; expected 0 (an image) to {}", where, shape.frames,
                       kMaxFrames);
  if (outside(shape.steps, 1, kMaxSteps))
    return fmt::format("'{}.steps' is {}; expected 1 to {}", where, shape.steps, kMaxSteps);
  if (!std::isfinite(shape.weight) || shape.weight < 0)
    return fmt::format("'{}.weight' is {}; expected a weight of 0 or more", where, shape.weight);
  return std::nullopt;
}

// What an open loop's rate implies: `requests` at `rate` spread over at most kMaxServeSeconds
// (their expected span), and `duration_s` at `rate` making at most kMaxServeRequests (their
// expected count). A load bounded by both ends at the first, within both caps already.
std::optional<std::string> OpenLoopSizeProblem(const ServeLoad& load) {
  const double count = load.requests + static_cast<double>(load.warmup_requests);
  if (load.duration_s == 0 && count / load.rate_per_s > kMaxServeSeconds)
    return fmt::format(
        "'requests' {} (with 'warmup_requests' {}) at 'rate' {} span about {:.3g} s; expected "
        "a load of at most {} s (a higher rate, fewer requests, or a duration_s)",
        load.requests, load.warmup_requests, load.rate_per_s, count / load.rate_per_s,
        kMaxServeSeconds);
  if (load.requests == 0 && load.duration_s * load.rate_per_s > kMaxServeRequests)
    return fmt::format(
        "'duration_s' {} at 'rate' {} makes about {:.3g} requests; expected at most {} (a lower "
        "rate, a shorter duration_s, or a count of requests)",
        load.duration_s, load.rate_per_s, load.duration_s * load.rate_per_s, kMaxServeRequests);
  return std::nullopt;
}

// A rate sweep (rate_points) or a share of a capacity trial's throughput (of_capacity): both
// need a count of requests, since how long a load at a rate not yet known lasts is not known.
std::optional<std::string> CapacityShareProblem(const ServeLoad& load) {
  if (load.rate_points != 0) {
    if (load.rate_points < 2 || load.rate_points > kMaxRatePoints)
      return fmt::format("'points' is {}; expected 2 to {} open-loop rates of a rate: sweep",
                         load.rate_points, kMaxRatePoints);
    if (load.of_capacity != 0 || load.rate_per_s != 0)
      return "'rate' is a sweep and a rate; expected one of them";
  } else {
    if (!(load.of_capacity >= 0.01 && load.of_capacity <= 1))
      return fmt::format("'rate.of_capacity' is {}; expected a share of capacity from 0.01 to 1",
                         load.of_capacity);
    if (load.capacity_concurrency < 1 || load.capacity_concurrency > kMaxServeRequests)
      return fmt::format(
          "'rate.capacity_concurrency' is {}; expected the capacity trial's closed loop, 1 to {}",
          load.capacity_concurrency, kMaxServeRequests);
    if (load.concurrency != 0)
      return fmt::format(
          "'concurrency' is {} with a rate of capacity; expected none (the capacity trial's "
          "closed loop is rate.capacity_concurrency)",
          load.concurrency);
  }
  if (load.requests == 0)
    return "'requests' is 0 with a rate of capacity; expected a count of requests (how long a "
           "load lasts at a rate measured later is not known before)";
  return std::nullopt;
}

bool IsSha256Hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::optional<std::string> ServeLoadProblem(const ServeLoad& load) {
  if (load.replicas < 1 || load.replicas > 4096)
    return fmt::format("'replicas' is {}; expected 1 to 4096", load.replicas);
  if (!(load.slo_scale >= 1 && load.slo_scale <= 1e6))
    return fmt::format("'slo_scale' is {}; expected a multiple of the isolated latency, 1 to 1e6",
                       load.slo_scale);
  if (load.arrivals == ArrivalKind::kTrace) {
    if (load.trace.empty()) return "'trace' is empty; expected the path of an arrival trace";
    if (load.concurrency != 0 || load.rate_per_s != 0)
      return "'arrivals' is trace; expected no rate_per_s or concurrency (the trace sets both)";
    if (!load.trace_sha256.empty() && !IsSha256Hex(load.trace_sha256))
      return "'trace_sha256' is not 64 lowercase hex digits; expected the SHA-256 of the trace "
             "(ditbench writes it)";
    return std::nullopt;
  }
  if (!load.trace.empty() || !load.trace_sha256.empty())
    return "'trace' is set with generated arrivals; expected arrivals: trace with a trace";
  const bool of_capacity = load.rate_points != 0 || load.of_capacity != 0;
  if (of_capacity) {
    if (auto problem = CapacityShareProblem(load)) return problem;
  } else if ((load.rate_per_s != 0) == (load.concurrency != 0)) {
    return fmt::format("'rate' is {} and 'concurrency' {}; expected exactly one of them",
                       load.rate_per_s, load.concurrency);
  }
  // A share of capacity is an open loop whose rate is known once its capacity trial ran.
  const bool open_loop = load.rate_per_s != 0 || load.of_capacity != 0;
  if (load.rate_per_s != 0 && !(load.rate_per_s >= kMinRatePerS && load.rate_per_s <= kMaxRatePerS))
    return fmt::format("'rate' is {}; expected requests per second from {} to {}", load.rate_per_s,
                       kMinRatePerS, kMaxRatePerS);
  if (load.concurrency < 0 || load.concurrency > kMaxServeRequests)
    return fmt::format("'concurrency' is {}; expected 1 to {}", load.concurrency,
                       kMaxServeRequests);
  if (load.arrivals == ArrivalKind::kGamma &&
      !(load.burstiness >= kMinBurstiness && load.burstiness <= kMaxBurstiness))
    return fmt::format("'burstiness' is {}; expected the gaps' CV^2, from {} to {}",
                       load.burstiness, kMinBurstiness, kMaxBurstiness);
  if (load.stop_percentile != 0 && !(load.stop_percentile >= 50 && load.stop_percentile <= 99.9 &&
                                     load.stop_within >= 1e-3 && load.stop_within <= 1))
    return fmt::format(
        "'early_stop' is percentile {}, within {}; expected a percentile from 50 to 99.9 and "
        "within from 0.001 to 1",
        load.stop_percentile, load.stop_within);
  if (load.mix.empty()) return "'mix' is empty; expected at least one request shape";
  if (load.mix.size() > static_cast<std::size_t>(kMaxRequestShapes))
    return fmt::format("'mix' lists {} shapes; expected at most {}", load.mix.size(),
                       kMaxRequestShapes);
  double total_weight = 0;
  for (std::size_t i = 0; i < load.mix.size(); ++i) {
    if (auto problem = ShapeProblem(load.mix[i], fmt::format("mix[{}]", i))) return problem;
    total_weight += load.mix[i].weight;
  }
  if (!(total_weight > 0 && std::isfinite(total_weight)))
    return "'mix' has no weight; expected a positive weight on at least one shape";
  if (load.requests < 0 || load.warmup_requests < 0 ||
      load.requests + static_cast<double>(load.warmup_requests) > kMaxServeRequests)
    return fmt::format("'requests' is {} and 'warmup_requests' {}; expected at most {} in all",
                       load.requests, load.warmup_requests, kMaxServeRequests);
  if (!(load.duration_s >= 0 && load.duration_s <= kMaxServeSeconds))
    return fmt::format("'duration_s' is {}; expected 0 to {} seconds", load.duration_s,
                       kMaxServeSeconds);
  if (load.requests == 0 && (load.duration_s == 0 || !open_loop))
    return open_loop ? "'requests' and 'duration_s' are 0; expected at least one of them"
                     : "'requests' is 0; expected a count of requests for a closed loop";
  if (load.rate_per_s != 0) return OpenLoopSizeProblem(load);
  return std::nullopt;
}

std::vector<double> RateSweepShares(int points) {
  if (points == 1) return {0.5};
  std::vector<double> shares;
  for (int i = 0; i < points; ++i) shares.push_back(0.1 + 0.8 * i / (points - 1));
  return shares;
}

namespace {

std::optional<ArrivalKind> ParseArrivalKind(const std::string& name) {
  if (name == "poisson") return ArrivalKind::kPoisson;
  if (name == "gamma") return ArrivalKind::kGamma;
  if (name == "constant") return ArrivalKind::kConstant;
  if (name == "trace") return ArrivalKind::kTrace;
  return std::nullopt;
}

const char* ArrivalKindName(ArrivalKind kind) {
  switch (kind) {
    case ArrivalKind::kPoisson:
      return "poisson";
    case ArrivalKind::kGamma:
      return "gamma";
    case ArrivalKind::kConstant:
      return "constant";
    case ArrivalKind::kTrace:
      return "trace";
  }
  return "poisson";
}

const std::vector<std::string> kServeKeys = {
    "arrivals",        "rate",      "burstiness", "concurrency", "requests", "duration_s",
    "warmup_requests", "slo_scale", "early_stop", "mix",         "trace",    "points"};
const std::vector<std::string> kMixKeys = {"resolution", "frames", "steps", "weight"};

// One `mix` entry: a map of kMixKeys, each optional (kTrialsOwn's fields stand for the trial's).
bool ParseMixEntry(const nlohmann::json& value, const std::string& where, RequestShape* shape,
                   std::string* expected) {
  *expected = fmt::format("{} as {}", where, kMixEntryExpected);
  if (!value.is_object()) return false;
  *shape = kTrialsOwn;
  const auto integer = [&](const std::string& key, const nlohmann::json& v, int low, int high,
                           int* out) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < low || v.get<std::int64_t>() > high) {
      *expected = fmt::format("{}.{} as an integer from {} to {}", where, key, low, high);
      return false;
    }
    *out = static_cast<int>(v.get<std::int64_t>());
    return true;
  };
  for (const auto& [key, v] : value.items()) {
    if (key == "resolution") {
      const auto resolution = ParseResolution(v);
      if (!resolution) {
        *expected = fmt::format("{}.resolution as {}", where, ResolutionExpected());
        return false;
      }
      std::tie(shape->width, shape->height) = *resolution;
    } else if (key == "frames") {
      if (!integer(key, v, 0, kMaxFrames, &shape->frames)) return false;
    } else if (key == "steps") {
      if (!integer(key, v, 1, kMaxSteps, &shape->steps)) return false;
    } else if (key == "weight") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0) ||
          v.get<double>() > 1e9) {
        *expected = fmt::format("{}.weight as a number above 0, at most 1e9", where);
        return false;
      }
      shape->weight = v.get<double>();
    } else {
      const std::string guess = DidYouMean(key, kMixKeys);
      *expected = fmt::format("{} keys {}, not '{}'{}", where, fmt::join(kMixKeys, ", "), key,
                              guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess));
      return false;
    }
  }
  return true;
}

// `mix`: a list of 1 to kMaxRequestShapes entries.
bool ParseMix(const nlohmann::json& value, std::vector<RequestShape>* mix, std::string* expected) {
  if (!value.is_array() || value.empty() ||
      value.size() > static_cast<std::size_t>(kMaxRequestShapes)) {
    *expected = fmt::format("serve.mix as a list of 1 to {} request shapes, each {}",
                            kMaxRequestShapes, kMixEntryExpected);
    return false;
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    RequestShape shape;
    if (!ParseMixEntry(value[i], fmt::format("serve.mix[{}]", i), &shape, expected)) return false;
    mix->push_back(shape);
  }
  return true;
}

// `early_stop`: {percentile: P, within: W}.
bool ParseEarlyStop(const nlohmann::json& v, ServeLoad* load, std::string* expected) {
  *expected = kEarlyStopExpected;
  if (!v.is_object() || !v.contains("percentile")) return false;
  for (const auto& [field, number] : v.items()) {
    if (field != "percentile" && field != "within") {
      *expected = fmt::format("{}, not '{}'", kEarlyStopExpected, field);
      return false;
    }
    if (!number.is_number()) return false;
    (field == "percentile" ? load->stop_percentile : load->stop_within) = number.get<double>();
  }
  return true;
}

// `rate`: requests per second, "sweep" (`*sweep` set; its points are a key of their own), or a
// share of a capacity trial's throughput {of_capacity: F, capacity_concurrency: C}.
bool ParseRate(const nlohmann::json& v, ServeLoad* load, bool* sweep, std::string* expected) {
  *expected = kRateExpected;
  if (v.is_number()) {
    load->rate_per_s = v.get<double>();
    return true;
  }
  if (v.is_string()) return (*sweep = v.get<std::string>() == "sweep");
  if (!v.is_object() || !v.contains("of_capacity") || !v.contains("capacity_concurrency"))
    return false;
  for (const auto& [field, value] : v.items()) {
    if (field == "of_capacity" && value.is_number()) {
      load->of_capacity = value.get<double>();
    } else if (field == "capacity_concurrency" && value.is_number_integer() &&
               value.get<std::int64_t>() >= 1 && value.get<std::int64_t>() <= kMaxServeRequests) {
      load->capacity_concurrency = static_cast<int>(value.get<std::int64_t>());
    } else {
      *expected = fmt::format("{}, not '{}': {}", kRateExpected, field, value.dump());
      return false;
    }
  }
  return true;
}

// ServeLoadProblem of a load as a sweep writes it, the trial's own fields of a shape as
// placeholders: validity checks the shapes the trial resolves (experiments/validity.cc).
std::optional<std::string> ParsedLoadProblem(const ServeLoad& parsed) {
  ServeLoad checked = parsed;
  if (checked.mix.empty()) checked.mix = {RequestShape{}};
  for (RequestShape& shape : checked.mix) {
    const RequestShape placeholder;
    if (shape.width == 0) shape.width = shape.height = placeholder.width;
    if (shape.frames < 0) shape.frames = placeholder.frames;
    if (shape.steps == 0) shape.steps = placeholder.steps;
  }
  return ServeLoadProblem(checked);
}

}  // namespace

bool ParseServeLoad(const nlohmann::json& value, std::optional<ServeLoad>* load,
                    std::string* expected) {
  *expected = kServeExpected;
  if (value.is_string() && value.get<std::string>() == "none") {
    load->reset();
    return true;
  }
  if (!value.is_object() || value.empty()) return false;
  ServeLoad parsed;
  bool rate_sweep = false;
  int points = -1;
  const auto number = [&](const std::string& key, const nlohmann::json& v, double* out) {
    if (!v.is_number()) {
      *expected = fmt::format("serve.{} as a number", key);
      return false;
    }
    *out = v.get<double>();
    return true;
  };
  const auto count = [&](const std::string& key, const nlohmann::json& v, int* out) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() > kMaxServeRequests) {
      *expected = fmt::format("serve.{} as an integer from 0 to {}", key, kMaxServeRequests);
      return false;
    }
    *out = static_cast<int>(v.get<std::int64_t>());
    return true;
  };
  for (const auto& [key, v] : value.items()) {
    if (key == "arrivals") {
      const auto kind = v.is_string() ? ParseArrivalKind(v.get<std::string>()) : std::nullopt;
      if (!kind) {
        *expected = "serve.arrivals as one of poisson, gamma, constant, trace";
        return false;
      }
      parsed.arrivals = *kind;
    } else if (key == "rate") {
      if (!ParseRate(v, &parsed, &rate_sweep, expected)) return false;
    } else if (key == "points") {
      if (!count(key, v, &points)) return false;
    } else if (key == "burstiness") {
      if (!number(key, v, &parsed.burstiness)) return false;
    } else if (key == "duration_s") {
      if (!number(key, v, &parsed.duration_s)) return false;
    } else if (key == "slo_scale") {
      if (!number(key, v, &parsed.slo_scale)) return false;
    } else if (key == "concurrency") {
      if (!count(key, v, &parsed.concurrency)) return false;
    } else if (key == "requests") {
      if (!count(key, v, &parsed.requests)) return false;
    } else if (key == "warmup_requests") {
      if (!count(key, v, &parsed.warmup_requests)) return false;
    } else if (key == "trace") {
      if (!v.is_string() || v.get<std::string>().empty()) {
        *expected = "serve.trace as the path of an arrival trace (CSV)";
        return false;
      }
      parsed.trace = v.get<std::string>();
    } else if (key == "trace_sha256") {  // written by ditbench (the sweep reader), not listed
      if (!v.is_string() || !IsSha256Hex(v.get<std::string>())) {
        *expected =
            "serve.trace_sha256 as the SHA-256 of the trace's bytes (64 lowercase hex "
            "digits, taken by ditbench as it reads the sweep)";
        return false;
      }
      parsed.trace_sha256 = v.get<std::string>();
    } else if (key == "mix") {
      if (!ParseMix(v, &parsed.mix, expected)) return false;
    } else if (key == "early_stop") {
      if (!ParseEarlyStop(v, &parsed, expected)) return false;
    } else if (key == "replicas") {
      *expected = "no serve.replicas: a serving trial's replicas are its dp groups (set dp)";
      return false;
    } else {
      const std::string guess = DidYouMean(key, kServeKeys);
      *expected = fmt::format("serve keys {}, not '{}'{}", fmt::join(kServeKeys, ", "), key,
                              guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess));
      return false;
    }
  }
  if (rate_sweep != (points >= 0)) {
    *expected = rate_sweep ? "serve.points with rate: sweep, the open-loop rates to measure (2 to "
                             "16)"
                           : "serve.points only with rate: sweep";
    return false;
  }
  if (rate_sweep) parsed.rate_points = points;
  if (auto problem = ParsedLoadProblem(parsed)) {
    *expected = "serve: " + *problem;
    return false;
  }
  *load = std::move(parsed);
  return true;
}

nlohmann::json ServeLoadJson(const ServeLoad& load) {
  nlohmann::json j = nlohmann::json::object();
  j["arrivals"] = ArrivalKindName(load.arrivals);
  // A share of capacity is known by its share, never by the rate it came to at launch.
  if (load.rate_points != 0) {
    j["rate"] = "sweep";
    j["points"] = load.rate_points;
  } else if (load.of_capacity != 0) {
    j["rate"] = {{"capacity_concurrency", load.capacity_concurrency},
                 {"of_capacity", load.of_capacity}};
  } else if (load.rate_per_s != 0) {
    j["rate"] = load.rate_per_s;
  }
  if (load.arrivals == ArrivalKind::kGamma) j["burstiness"] = load.burstiness;
  if (load.concurrency != 0) j["concurrency"] = load.concurrency;
  if (load.requests != 0) j["requests"] = load.requests;
  if (load.duration_s != 0) j["duration_s"] = load.duration_s;
  if (load.warmup_requests != 0) j["warmup_requests"] = load.warmup_requests;
  j["slo_scale"] = load.slo_scale;
  if (!load.trace.empty()) j["trace"] = load.trace.string();
  if (!load.trace_sha256.empty()) j["trace_sha256"] = load.trace_sha256;
  if (load.stop_percentile != 0)
    j["early_stop"] = {{"percentile", load.stop_percentile}, {"within", load.stop_within}};
  if (!load.mix.empty()) {
    nlohmann::json mix = nlohmann::json::array();
    for (const RequestShape& shape : load.mix) {
      nlohmann::json entry = nlohmann::json::object();
      if (shape.width != 0)
        entry["resolution"] = shape.height == shape.width
                                  ? nlohmann::json(shape.width)
                                  : nlohmann::json(fmt::format("{}x{}", shape.width, shape.height));
      if (shape.frames >= 0) entry["frames"] = shape.frames;
      if (shape.steps != 0) entry["steps"] = shape.steps;
      entry["weight"] = shape.weight;
      mix.push_back(std::move(entry));
    }
    j["mix"] = std::move(mix);
  }
  return j;
}

std::string RequestShapeText(const RequestShape& shape) {
  std::string text = fmt::format("{}x{}", shape.width, shape.height);
  if (shape.frames > 0) text += fmt::format(", {} frames", shape.frames);
  return text + fmt::format(", {} steps", shape.steps);
}

}  // namespace ditbench
