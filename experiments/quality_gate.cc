#include "experiments/quality_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace ditbench {
namespace {

// A number for a verdict: short, and exact enough to see why it missed ("30.1", "0.0021").
std::string Short(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", value);
}

}  // namespace

std::string QualityGateExpected(std::string_view key) {
  if (key == "max_output_error")
    return "a number above 0 (the most relative L2 error against the 1-rank trial, e.g. 1e-3)";
  if (key == "min_psnr")
    return "a number of dB above 0 (the least PSNR of the decoded image, e.g. 35)";
  if (key == "min_ssim")
    return "a number above 0 and at most 1 (the least SSIM of the decoded image)";
  if (key == "restarts")
    return fmt::format(
        "an integer from 1 to {} (server restarts an engine trial measures its restart band "
        "over)",
        kMaxQualityRestarts);
  if (key == "reference")
    return "a trial key: 16 hexadecimal characters, as `ditbench query` shows trial_key (the "
           "trial this one's output is compared with)";
  return "one of max_output_error, min_psnr, min_ssim, restarts, reference";
}

bool SetQualityGate(QualityGate& gate, const std::string& key, const nlohmann::json& value,
                    std::string* expected) {
  *expected = QualityGateExpected(key);
  if (key == "reference") {
    if (!value.is_string()) return false;
    const std::string& text = value.get_ref<const std::string&>();
    if (text.size() != 16 || !std::all_of(text.begin(), text.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }))
      return false;
    gate.reference = text;
    return true;
  }
  if (!value.is_number() || value.is_boolean()) return false;
  if (key == "restarts") {
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 ||
        value.get<std::int64_t>() > kMaxQualityRestarts)
      return false;
    gate.restarts = value.get<int>();
    return true;
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || v <= 0) return false;
  if (key == "max_output_error")
    gate.max_output_error = v;
  else if (key == "min_psnr")
    gate.min_psnr = v;
  else if (key == "min_ssim" && v <= 1)
    gate.min_ssim = v;
  else
    return false;
  return true;
}

nlohmann::json QualityGateJson(const QualityGate& gate) {
  nlohmann::json json = nlohmann::json::object();
  if (gate.max_output_error) json["max_output_error"] = *gate.max_output_error;
  if (gate.min_psnr) json["min_psnr"] = *gate.min_psnr;
  if (gate.min_ssim) json["min_ssim"] = *gate.min_ssim;
  if (gate.restarts) json["restarts"] = *gate.restarts;
  if (gate.reference) json["reference"] = *gate.reference;
  return json;
}

bool QualityGateFromJson(const nlohmann::json& value, QualityGate* gate, std::string* expected) {
  *expected =
      "an object of quality gates: max_output_error, min_psnr, min_ssim, restarts, reference";
  if (!value.is_object()) return false;
  QualityGate read;
  for (const auto& [key, number] : value.items())
    if (!SetQualityGate(read, key, number, expected)) return false;
  *gate = read;
  return true;
}

std::optional<std::string> QualityVerdict(const QualityGate& gate, bool decoded_image,
                                          const OutputQuality& measured,
                                          std::optional<double> restart_psnr) {
  std::vector<std::string> missed;
  bool applies = false;
  if (gate.max_output_error) {
    if (!measured.output_error) return std::nullopt;
    applies = true;
    if (*measured.output_error > *gate.max_output_error)
      missed.push_back(fmt::format("output error {} > {}", Short(*measured.output_error),
                                   Short(*gate.max_output_error)));
  }
  if (decoded_image && gate.min_psnr) {
    if (!measured.psnr) return std::nullopt;
    applies = true;
    if (*measured.psnr < *gate.min_psnr)
      missed.push_back(fmt::format("psnr {} < {}", Short(*measured.psnr), Short(*gate.min_psnr)));
  }
  if (decoded_image && gate.min_ssim) {
    if (!measured.ssim) return std::nullopt;
    applies = true;
    if (*measured.ssim < *gate.min_ssim)
      missed.push_back(fmt::format("ssim {} < {}", Short(*measured.ssim), Short(*gate.min_ssim)));
  }
  if (!applies) return std::nullopt;
  if (decoded_image && gate.min_psnr && restart_psnr && *gate.min_psnr > *restart_psnr)
    return fmt::format("{}: min_psnr {} > restart band {} dB", kUnresolvedQualityPrefix,
                       Short(*gate.min_psnr), Short(*restart_psnr));
  if (missed.empty()) return "ok";
  std::string verdict = std::string(kBelowQualityPrefix) + ": ";
  for (std::size_t i = 0; i < missed.size(); ++i) verdict += (i ? ", " : "") + missed[i];
  return verdict;
}

bool IsBelowQuality(std::string_view verdict) { return verdict.starts_with(kBelowQualityPrefix); }

std::string_view MissedGates(std::string_view verdict) {
  if (!IsBelowQuality(verdict)) return verdict;
  verdict.remove_prefix(std::min(verdict.size(), kBelowQualityPrefix.size()));
  while (!verdict.empty() && (verdict.front() == ':' || verdict.front() == ' '))
    verdict.remove_prefix(1);
  return verdict;
}

}  // namespace ditbench
