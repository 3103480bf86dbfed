#include "experiments/trial.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/user_error.h"
#include "experiments/trial_identity.h"

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
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [v, text] : table)
    if (v == value) return text;
  return "unknown";
}

template <typename Enum, std::size_t N>
std::vector<std::string_view> NamesOf(
    const std::array<std::pair<Enum, std::string_view>, N>& table) {
  std::vector<std::string_view> names;
  for (const auto& [value, text] : table) names.push_back(text);
  return names;
}

template <typename Enum, std::size_t N>
std::vector<Enum> ValuesOf(const std::array<std::pair<Enum, std::string_view>, N>& table) {
  std::vector<Enum> values;
  for (const auto& [value, text] : table) values.push_back(value);
  return values;
}

constexpr std::array<std::pair<Scope, std::string_view>, 3> kScopes{
    {{Scope::kForward, "forward"}, {Scope::kDenoise, "denoise"}, {Scope::kPipeline, "pipeline"}}};

constexpr std::array<std::pair<Precision, std::string_view>, 4> kPrecisions{
    {{Precision::kFp32, "fp32"},
     {Precision::kTf32, "tf32"},
     {Precision::kBf16, "bf16"},
     {Precision::kFp16, "fp16"}}};

constexpr std::array<std::pair<GraphMode, std::string_view>, 2> kGraphModes{
    {{GraphMode::kEager, "eager"}, {GraphMode::kCudaGraph, "cuda_graph"}}};

constexpr std::array<std::pair<AttentionBackend, std::string_view>, 5> kAttentionBackends{
    {{AttentionBackend::kAuto, "auto"},
     {AttentionBackend::kFlash, "flash"},
     {AttentionBackend::kEfficient, "efficient"},
     {AttentionBackend::kCudnn, "cudnn"},
     {AttentionBackend::kMath, "math"}}};

constexpr std::array<std::pair<Quantization, std::string_view>, 3> kQuantizations{
    {{Quantization::kNone, "none"},
     {Quantization::kFp8Rowwise, "fp8_rowwise"},
     {Quantization::kFp8Tensor, "fp8_tensor"}}};

constexpr std::array<std::pair<TrialStatus, std::string_view>, 9> kStatuses{
    {{TrialStatus::kPending, "pending"},
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
std::string_view GraphModeName(GraphMode mode) { return NameOf(kGraphModes, mode); }
std::optional<GraphMode> ParseGraphMode(std::string_view name) {
  return FindByName(kGraphModes, name);
}
std::string_view AttentionBackendName(AttentionBackend backend) {
  return NameOf(kAttentionBackends, backend);
}
std::optional<AttentionBackend> ParseAttentionBackend(std::string_view name) {
  return FindByName(kAttentionBackends, name);
}
std::string_view QuantizationName(Quantization quant) { return NameOf(kQuantizations, quant); }
std::optional<Quantization> ParseQuantization(std::string_view name) {
  return FindByName(kQuantizations, name);
}
std::string_view StepCacheKindName(StepCache::Kind kind) {
  switch (kind) {
    case StepCache::Kind::kFbCache:
      return "fbcache";
    case StepCache::Kind::kTeaCache:
      return "teacache";
    case StepCache::Kind::kNone:
      break;
  }
  return "none";
}
const std::vector<std::string_view>& ScopeNames() {
  static const std::vector<std::string_view> names = NamesOf(kScopes);
  return names;
}
const std::vector<std::string_view>& PrecisionNames() {
  static const std::vector<std::string_view> names = NamesOf(kPrecisions);
  return names;
}
const std::vector<std::string_view>& GraphModeNames() {
  static const std::vector<std::string_view> names = NamesOf(kGraphModes);
  return names;
}
const std::vector<std::string_view>& AttentionBackendNames() {
  static const std::vector<std::string_view> names = NamesOf(kAttentionBackends);
  return names;
}
const std::vector<std::string_view>& QuantizationNames() {
  static const std::vector<std::string_view> names = NamesOf(kQuantizations);
  return names;
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

ServeLoad TrialServeLoad(const TrialConfig& config) {
  ServeLoad load = config.serve.value();
  const RequestShape own{config.resolution, config.image_height(), config.frames, config.steps,
                         1.0};
  if (load.mix.empty()) load.mix = {own};
  for (RequestShape& shape : load.mix) {
    if (shape.width == 0) {
      shape.width = own.width;
      shape.height = own.height;
    }
    if (shape.frames < 0) shape.frames = own.frames;
    if (shape.steps == 0) shape.steps = own.steps;
  }
  load.replicas = config.dp;
  load.seed = static_cast<std::uint64_t>(config.seed);
  return load;
}

TrialConfig CapacityTrial(const TrialConfig& config) {
  TrialConfig trial = config;
  ServeLoad& load = trial.serve.value();
  load.concurrency = load.capacity_concurrency;
  load.arrivals = ArrivalKind::kPoisson;  // a closed loop has no arrivals of its own
  load.burstiness = 1;
  load.of_capacity = 0;
  load.capacity_concurrency = 0;
  load.rate_per_s = 0;
  return trial;
}

TrialConfig ResolveCapacityShare(const TrialConfig& config, double capacity_per_s) {
  TrialConfig trial = config;
  ServeLoad& load = trial.serve.value();
  load.rate_per_s = load.of_capacity * capacity_per_s;
  return trial;
}

TrialConfig ShapeTrial(const TrialConfig& config, const RequestShape& shape) {
  TrialConfig trial = config;
  trial.resolution = shape.width;
  trial.height = shape.height == shape.width ? 0 : shape.height;
  trial.frames = shape.frames;
  trial.steps = shape.steps;
  trial.serve.reset();
  return trial;
}

std::string TrialConfig::resolution_text() const {
  return height > 0 ? fmt::format("{}x{}", resolution, height) : std::to_string(resolution);
}

nlohmann::json CanonicalJson(const TrialConfig& config) {
  nlohmann::json canonical = ComputationJson(config);
  AddPolicyJson(config, canonical);
  return canonical;
}

std::string CanonicalText(const TrialConfig& config) { return CanonicalJson(config).dump(); }

std::string TrialKey(const TrialConfig& config) {
  return Sha256Hex(IdentityText(config)).substr(0, 16);
}

std::string ConfigurationKey(const TrialConfig& config) {
  TrialConfig unseeded = config;
  unseeded.seed = 0;
  return TrialKey(unseeded);
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
