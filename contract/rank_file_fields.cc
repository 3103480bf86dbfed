#include "contract/rank_file_fields.h"

#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "contract/worker_contract.h"

namespace ditbench {
namespace {

// A value as it appears in a message: its JSON, cut to a readable length.
std::string Shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

const nlohmann::json& Member(const nlohmann::json& j, const std::string& key) {
  static const nlohmann::json kAbsent;
  const auto it = j.find(key);
  return it == j.end() ? kAbsent : *it;
}

// Whether `value` is an integer from lo to hi (any JSON integer, signed or not).
bool IntegerIn(const nlohmann::json& value, std::int64_t lo, std::int64_t hi) {
  if (value.is_number_unsigned())  // the parser reads every non-negative integer as unsigned
    return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
           (lo <= 0 || value.get<std::uint64_t>() >= static_cast<std::uint64_t>(lo));
  return value.is_number_integer() && value.get<std::int64_t>() >= lo &&
         value.get<std::int64_t>() <= hi;
}

}  // namespace

void RankFileFields::Fail(const std::string& field, const nlohmann::json& value,
                          const std::string& expected) const {
  throw std::runtime_error(fmt::format("{}: '{}' is {}; expected {}", path_.string(), field,
                                       value.is_null() ? "missing or null" : Shown(value),
                                       expected));
}

std::int64_t RankFileFields::Integer(const nlohmann::json& j, const std::string& key,
                                     std::int64_t lo, std::int64_t hi) const {
  const nlohmann::json& value = Member(j, key);
  if (!IntegerIn(value, lo, hi)) Fail(key, value, fmt::format("an integer from {} to {}", lo, hi));
  return value.get<std::int64_t>();
}

std::string RankFileFields::Text(const nlohmann::json& j, const std::string& key) const {
  const nlohmann::json& value = Member(j, key);
  if (!value.is_string()) Fail(key, value, "a string");
  return value.get<std::string>();
}

std::string RankFileFields::OptionalText(const nlohmann::json& j, const std::string& key) const {
  return Member(j, key).is_null() ? std::string() : Text(j, key);
}

std::optional<double> RankFileFields::OptionalNumber(const nlohmann::json& j,
                                                     const std::string& key, double max) const {
  const nlohmann::json& value = Member(j, key);
  if (value.is_null()) return std::nullopt;
  if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > max)
    Fail(key, value, fmt::format("a number from 0 to {:g}", max));
  return value.get<double>();
}

const nlohmann::json& RankFileFields::Object(const nlohmann::json& j,
                                             const std::string& key) const {
  const nlohmann::json& value = Member(j, key);
  if (!value.is_object()) Fail(key, value, "an object");
  return value;
}

nlohmann::json RankFileFields::Clocks(const nlohmann::json& j) const {
  const nlohmann::json& clocks = Member(j, "clocks");
  if (clocks.is_null()) return clocks;
  Object(j, "clocks");
  for (const char* flag : {"available", "throttled"})
    if (const auto& value = Member(clocks, flag); !value.is_null() && !value.is_boolean())
      Fail(fmt::format("clocks.{}", flag), value, "true or false");
  for (const char* mhz : {"sm_mhz_min", "sm_mhz_max"})
    if (const auto& value = Member(clocks, mhz);
        !value.is_null() && (!value.is_number() || value.get<double>() < 0))
      Fail(fmt::format("clocks.{}", mhz), value, "a non-negative number of MHz");
  return clocks;
}

void RankFileFields::Energy(const nlohmann::json& j, const std::vector<Sample>& samples,
                            std::optional<RankEnergy>& energy, std::string& unavailable) const {
  const nlohmann::json& value = Member(j, "energy");
  if (value.is_null()) return;
  const nlohmann::json& object = Object(j, "energy");
  if (const nlohmann::json& why = Member(object, "unavailable"); !why.is_null()) {
    if (!why.is_string() || why.get_ref<const std::string&>().empty() || object.size() != 1)
      Fail("energy.unavailable", why, "a reason (a string) and nothing else beside it");
    unavailable = why.get<std::string>();
    return;
  }
  const nlohmann::json& joules = Member(object, "joules");
  if (!joules.is_number() || !std::isfinite(joules.get<double>()) || joules.get<double>() < 0)
    Fail("energy.joules", joules, "a finite number of joules from 0");
  const nlohmann::json& window = Member(object, "window_ms");
  if (!window.is_number() || !(window.get<double>() > 0) ||
      !(window.get<double>() <= kMaxEnergyWindowMs))
    Fail("energy.window_ms", window,
         fmt::format("milliseconds above 0 and at most {:g}", kMaxEnergyWindowMs));
  double timed_ms = 0;
  for (const Sample& s : samples)
    if (!s.warmup && s.stage == kIterationStage) timed_ms += s.ms;
  if (window.get<double>() < timed_ms * kEnergyWindowSlack)
    Fail("energy.window_ms", window,
         fmt::format("at least the {:g} ms of timed iterations the window covers", timed_ms));
  const double watts = joules.get<double>() / (window.get<double>() / 1000.0);
  if (watts > kMaxBoardWatts)
    Fail("energy.joules", joules,
         fmt::format("at most {:g} W on average over the {:g} ms window (that is {:.0f} W)",
                     kMaxBoardWatts, window.get<double>(), watts));
  energy = RankEnergy{joules.get<double>(), window.get<double>()};
}

std::vector<Sample> RankFileFields::Samples(const nlohmann::json& j, int rank) const {
  const nlohmann::json& samples = Member(j, "samples");
  if (!samples.is_array()) Fail("samples", samples, "an array of samples");
  SampleChecker checker(*this, rank);
  for (std::size_t i = 0; i < samples.size(); ++i) checker.Add(samples[i], i);
  return checker.Take();
}

void SampleChecker::Add(const nlohmann::json& s, std::size_t index) {
  const std::string at = fmt::format("samples[{}]", index);
  if (!s.is_object()) fields_.Fail(at, s, "an object");
  Sample sample;
  sample.rank = rank_;
  const nlohmann::json& iteration = Member(s, "iteration");
  if (!IntegerIn(iteration, 0, kMaxIteration))
    fields_.Fail(at + ".iteration", iteration,
                 fmt::format("an integer from 0 to {}", kMaxIteration));
  sample.iteration = iteration.get<int>();
  const nlohmann::json& stage = Member(s, "stage");
  if (!stage.is_string() || stage.get_ref<const std::string&>().empty())
    fields_.Fail(at + ".stage", stage, "a stage name");
  sample.stage = stage.get<std::string>();
  const nlohmann::json& warmup = Member(s, "warmup");
  if (!warmup.is_boolean()) fields_.Fail(at + ".warmup", warmup, "true or false");
  sample.warmup = warmup.get<bool>();
  if (const nlohmann::json& reused = Member(s, "reused"); !reused.is_null()) {
    if (!reused.is_boolean()) fields_.Fail(at + ".reused", reused, "true or false");
    sample.reused = reused.get<bool>();
    if (sample.reused && sample.stage.rfind("step:", 0) != 0)
      fields_.Fail(
          at + ".reused", reused,
          fmt::format("false on stage '{}' (only a \"step:i\" sample is reused)", sample.stage));
  }
  const bool whole = sample.stage == kIterationStage;
  const nlohmann::json& ms = Member(s, "ms");
  const double least = whole ? kMinIterationMs : 0;
  if (!ms.is_number() || ms.get<double>() < least || ms.get<double>() >= kMaxSampleMs)
    fields_.Fail(at + ".ms", ms,
                 whole ? fmt::format("milliseconds from {:g} (1 ns: no real iteration is faster) "
                                     "to below {:g}",
                                     kMinIterationMs, kMaxSampleMs)
                       : fmt::format("milliseconds from 0 to below {:g}", kMaxSampleMs));
  sample.ms = ms.get<double>();
  if (whole && !whole_iterations_.insert(sample.iteration).second)
    fields_.Fail(at + ".iteration", iteration,
                 fmt::format("one '{}' sample per iteration; iteration {} has two", kIterationStage,
                             sample.iteration));
  read_.push_back(std::move(sample));
}

}  // namespace ditbench
