#include "trial/trial.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "trial/trial_identity.h"

namespace ditbench {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> FindByName(const std::array<std::pair<Enum, std::string_view>, N>& table,
                               std::string_view name) {
  for (const auto& [value, text] : table)
    if (text == name) return value;
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& table,
                        Enum value) {
  for (const auto& [v, text] : table)
    if (v == value) return text;
  return "unknown";
}

template <typename Enum, std::size_t N>
std::vector<Enum> ValuesOf(const std::array<std::pair<Enum, std::string_view>, N>& table) {
  std::vector<Enum> values;
  for (const auto& [value, text] : table) values.push_back(value);
  return values;
}

constexpr std::array<std::pair<Scope, std::string_view>, 3> kScopes{{
    {Scope::kForward, "forward"}, {Scope::kDenoise, "denoise"}, {Scope::kPipeline, "pipeline"}}};

constexpr std::array<std::pair<Precision, std::string_view>, 4> kPrecisions{{
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kBf16, "bf16"},
    {Precision::kFp16, "fp16"}}};

constexpr std::array<std::pair<TrialStatus, std::string_view>, 9> kStatuses{{
    {TrialStatus::kPending, "pending"},
    {TrialStatus::kRunning, "running"},
    {TrialStatus::kOk, "ok"},
    {TrialStatus::kSkipped, "skipped"},
    {TrialStatus::kOom, "oom"},
    {TrialStatus::kTimeout, "timeout"},
    {TrialStatus::kCrashed, "crashed"},
    {TrialStatus::kFailed, "failed"},
    {TrialStatus::kInterrupted, "interrupted"}}};

}  // namespace

std::string_view ScopeName(Scope scope) { return NameOf(kScopes, scope); }
std::optional<Scope> ParseScope(std::string_view name) { return FindByName(kScopes, name); }
std::string_view PrecisionName(Precision p) { return NameOf(kPrecisions, p); }
std::optional<Precision> ParsePrecision(std::string_view name) {
  return FindByName(kPrecisions, name);
}
std::vector<Scope> AllScopes() { return ValuesOf(kScopes); }
std::vector<Precision> AllPrecisions() { return ValuesOf(kPrecisions); }
double BytesPerElement(Precision p) {
  return p == Precision::kBf16 || p == Precision::kFp16 ? 2.0 : 4.0;
}
std::string_view StatusName(TrialStatus s) { return NameOf(kStatuses, s); }
std::optional<TrialStatus> ParseStatus(std::string_view name) {
  return FindByName(kStatuses, name);
}

nlohmann::json CanonicalJson(const TrialConfig& config) {
  nlohmann::json canonical = ComputationJson(config);
  canonical.update(PolicyJson(config));
  return canonical;
}

std::string CanonicalText(const TrialConfig& config) { return CanonicalJson(config).dump(); }

std::string TrialKey(const TrialConfig& config) {
  return KeyOfComputation(ComputationJson(config));
}

TrialConfig TrialConfigFromJson(const nlohmann::json& j) {
  TrialConfig c;
  auto get = [&](const char* key, auto& out) {
    if (!j.contains(key)) throw std::invalid_argument(fmt::format("missing key '{}'", key));
    try {
      j.at(key).get_to(out);
    } catch (const nlohmann::json::exception&) {
      throw std::invalid_argument(fmt::format("key '{}' has the wrong type", key));
    }
  };
  std::string precision, scope;
  if (!j.contains("model")) throw std::invalid_argument("missing key 'model'");
  if (j["model"].is_string()) {
    c.model = j["model"].get<std::string>();
  } else if (j["model"].is_object() && j["model"].contains("preset") &&
             j["model"]["preset"].is_string()) {
    for (const auto& [key, value] : j["model"].items()) {
      if (key == "preset") c.model = value.get<std::string>();
      else if (key == "weights" && value.is_string()) c.weights = value.get<std::string>();
      else if (key == "vae_weights" && value.is_string()) c.vae_weights = value.get<std::string>();
      else if (value.is_number_integer()) c.model_overrides[key] = value.get<int>();
      else throw std::invalid_argument(fmt::format("model dimension '{}' is not an integer", key));
    }
  } else {
    throw std::invalid_argument("key 'model' must be a preset name or {preset: ...}");
  }
  get("resolution", c.resolution);
  get("precision", precision);
  get("scope", scope);
  get("batch", c.batch);
  get("steps", c.steps);
  get("warmup", c.warmup);
  get("timeout_s", c.timeout_s);
  get("seed", c.seed);
  get("pipefusion_patches", c.pipefusion_patches);
  // Added after key format v2 was frozen: older configurations used 1.
  if (j.contains("pipefusion_warmup_steps")) get("pipefusion_warmup_steps", c.pipefusion_warmup_steps);
  get("profile_blocks", c.profile_blocks);
  for (const DegreeInfo& d : kDegreeTable) get(std::string(d.name).c_str(), c.*d.member);
  // Added with key format v2: a configuration written before it is a `dit` trial.
  if (j.contains("workload")) {
    std::string workload;
    get("workload", workload);
    const auto parsed = ParseWorkload(workload);
    if (!parsed)
      throw std::invalid_argument(
          fmt::format("key 'workload' is '{}': expected {}", workload, WorkloadNameList()));
    c.workload = *parsed;
  }
  // Added with the `command` workload: absent in earlier configurations.
  if (j.contains("command")) get("command", c.command);
  // Added with tiled VAE decoding: absent in earlier configurations (one piece).
  if (j.contains("vae_tile")) get("vae_tile", c.vae_tile);
  if (j.contains("custom")) {
    if (!j["custom"].is_object()) throw std::invalid_argument("key 'custom' must be an object");
    for (const auto& [name, value] : j["custom"].items()) {
      if (!value.is_primitive() || value.is_null())
        throw std::invalid_argument(fmt::format("custom axis '{}' must be a scalar", name));
      c.custom[name] = value;
    }
  }
  if (!j.contains("repeats") || !j["repeats"].is_object())
    throw std::invalid_argument("missing object 'repeats'");
  const auto& r = j["repeats"];
  c.repeats.min = r.value("min", 5);
  c.repeats.max = r.value("max", 5);
  c.repeats.target_rel_ci = r.value("target_rel_ci", 0.0);
  c.repeats.max_seconds = r.value("max_seconds", 0.0);
  auto p = ParsePrecision(precision);
  if (!p) throw std::invalid_argument(fmt::format("unknown precision '{}'", precision));
  c.precision = *p;
  auto s = ParseScope(scope);
  if (!s) throw std::invalid_argument(fmt::format("unknown scope '{}'", scope));
  c.scope = *s;
  return c;
}

std::string Sha256Hex(std::string_view text) {
  // Fetched once: OpenSSL 3 looks the algorithm up again on every EVP_sha256() digest, which
  // dominated planning a large sweep (one key per trial).
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, sha256 ? sha256 : EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(length * 2, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace ditbench
