#include "model_zoo/layers/fp8_linear.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/parallel/parallel_context.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::fp8_linear_test {
namespace {

// Every finite float8_e4m3fn value, decoded from its bits here (sign, 4 exponent bits with
// bias 7, 3 mantissa bits; exponent 0 subnormal; S.1111.111 is NaN, no infinities), with its
// mantissa's last bit for round-half-to-even.
struct E4m3Value {
  double value;
  bool odd;
};
std::vector<E4m3Value> E4m3Grid() {
  std::vector<E4m3Value> grid;
  for (int bits = 0; bits < 256; ++bits) {
    const int sign = bits >> 7, exponent = (bits >> 3) & 15, mantissa = bits & 7;
    if (exponent == 15 && mantissa == 7) continue;  // NaN
    const double magnitude = exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6)
                                           : (1 + mantissa / 8.0) * std::ldexp(1.0, exponent - 7);
    grid.push_back({sign ? -magnitude : magnitude, (mantissa & 1) != 0});
  }
  return grid;
}

// x rounded to the nearest e4m3 value, ties to the even mantissa, saturated at +-448.
double RoundToE4m3(double x, const std::vector<E4m3Value>& grid) {
  x = std::clamp(x, -448.0, 448.0);
  const E4m3Value* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const E4m3Value& v : grid) {
    const double distance = std::abs(v.value - x);
    if (distance < best_distance || (distance == best_distance && best->odd && !v.odd)) {
      best = &v;
      best_distance = distance;
    }
  }
  return best->value;
}

// Row-wise: each row's scale maps its largest magnitude to 448, and every element is that
// row's value over its scale rounded onto the e4m3 grid (the reference above, not torch's cast).
TEST(Fp8LinearTest, RowwiseQuantizationMatchesAReferenceRounding) {
  torch::manual_seed(0);
  auto x = torch::randn({6, 48}) * torch::tensor({0.01, 1.0, 30.0, 1e-3, 5.0, 700.0}).view({6, 1});
  x[3].zero_();
  const Fp8Matrix q = QuantizeE4m3(x, Fp8Scaling::kRowwise);
  ASSERT_EQ(q.data.scalar_type(), torch::kFloat8_e4m3fn);
  ASSERT_EQ(q.scale.sizes(), (std::vector<int64_t>{6, 1}));
  const auto grid = E4m3Grid();
  const auto data = q.data.to(torch::kFloat64);
  for (int64_t r = 0; r < 6; ++r) {
    const double amax = x[r].abs().max().item<double>();
    const double scale = q.scale[r][0].item<double>();
    if (amax == 0) {
      EXPECT_EQ(scale, 1.0) << "a row of zeros keeps a finite scale";
      EXPECT_EQ(data[r].abs().max().item<double>(), 0.0);
      continue;
    }
    EXPECT_NEAR(scale, amax / 448.0, 1e-6 * scale) << r;
    EXPECT_EQ(data[r].abs().max().item<double>(), 448.0) << "the largest magnitude maps to 448";
    for (int64_t c = 0; c < 48; ++c) {
      const double expected = RoundToE4m3(x[r][c].item<float>() / static_cast<float>(scale), grid);
      ASSERT_EQ(data[r][c].item<double>(), expected) << "row " << r << " column " << c;
    }
  }
  // Dequantized, each element within e4m3's half step (2^-4 relative) of the original, once
  // out of the subnormal range.
  auto back = data * q.scale.to(torch::kFloat64);
  auto x64 = x.to(torch::kFloat64);
  auto normal = x64.abs() >= q.scale.to(torch::kFloat64) * std::ldexp(1.0, -6);
  auto relative = ((back - x64).abs() / x64.abs().clamp_min(1e-30)).masked_select(normal);
  EXPECT_LE(relative.max().item<double>(), 1.0 / 16 + 1e-9);
}

TEST(Fp8LinearTest, PerTensorQuantizationHasOneScale) {
  torch::manual_seed(1);
  auto x = torch::randn({4, 32});
  x[2][5] = 9.0;  // the largest magnitude
  const Fp8Matrix q = QuantizeE4m3(x, Fp8Scaling::kTensor);
  EXPECT_EQ(q.scale.dim(), 0);
  EXPECT_NEAR(q.scale.item<double>(), 9.0 / 448.0, 1e-9);
  EXPECT_EQ(q.data[2][5].to(torch::kFloat32).item<float>(), 448.0f);
  const auto grid = E4m3Grid();
  const float scale = q.scale.item<float>();
  for (int64_t c = 0; c < 32; ++c)
    EXPECT_EQ(q.data[0][c].to(torch::kFloat64).item<double>(),
              RoundToE4m3(x[0][c].item<float>() / scale, grid));
}

// The GEMM on CPU: ATen's CPU kernel takes per-tensor scales (row-wise ones run on a GPU
// only), so the plumbing (the transposed weight, the scales, the bias, the shape) is checked
// here against the product of the dequantized operands.
TEST(Fp8LinearTest, TheTensorScaledGemmIsTheProductOfTheDequantizedOperands) {
  torch::manual_seed(2);
  auto x = torch::randn({2, 8, 64}, torch::kBFloat16);
  auto w = torch::randn({32, 64}) * 0.1;
  auto bias = torch::randn({32});
  const Fp8Matrix weight = QuantizeE4m3(w, Fp8Scaling::kTensor);
  torch::Tensor y;
  try {
    y = Fp8Linear(x, weight, bias, Fp8Scaling::kTensor);
  } catch (const c10::Error& e) {
    GTEST_SKIP() << "this LibTorch has no CPU FP8 GEMM: " << e.what_without_backtrace();
  }
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 8, 32}));
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  const Fp8Matrix a = QuantizeE4m3(x.reshape({-1, 64}), Fp8Scaling::kTensor);
  auto reference = torch::matmul(a.data.to(torch::kFloat32) * a.scale,
                                 (weight.data.to(torch::kFloat32) * weight.scale).t()) +
                   bias;
  EXPECT_TRUE(torch::allclose(y.reshape({-1, 32}).to(torch::kFloat32), reference, 2e-2, 2e-2));
  // And close to the high-precision product: FP8's error, not a wrong layout.
  auto exact = torch::matmul(x.reshape({-1, 64}).to(torch::kFloat32), w.t()) + bias;
  const double error =
      ((y.reshape({-1, 32}).to(torch::kFloat32) - exact).norm() / exact.norm()).item<double>();
  RecordProperty("rel_l2_against_fp32", std::to_string(error));
  EXPECT_LT(error, 0.08);
  EXPECT_GT(error, 0.0) << "quantized, so not bit-equal to the high-precision product";
}

TEST(Fp8LinearTest, PatternsMatchTheWholePath) {
  EXPECT_TRUE(MatchesPattern("transformer_blocks.3.ff_fc1", "transformer_blocks.*.ff_*"));
  EXPECT_TRUE(MatchesPattern("blocks.10.fc2", "blocks.1?.fc2"));
  EXPECT_FALSE(MatchesPattern("blocks.1.fc2", "blocks.1?.fc2"));
  EXPECT_FALSE(MatchesPattern("blocks.0.fc2x", "blocks.*.fc2"));
  EXPECT_TRUE(MatchesPattern("anything", "*"));
  EXPECT_FALSE(MatchesPattern("blocks.0.fc1", ""));
}

// The layers engines keep in high precision stay there: embedders and the final projection
// (outside the block lists), each block's modulation (`norm*`), and what quant_exclude names.
TEST(Fp8LinearTest, OnlyTheBlocksProjectionsAreQuantized) {
  EXPECT_TRUE(QuantizedLayer("transformer_blocks.0.qkv", {}));
  EXPECT_TRUE(QuantizedLayer("single_transformer_blocks.37.qkv_mlp", {}));
  EXPECT_TRUE(QuantizedLayer("blocks.27.cross_kv", {}));
  EXPECT_FALSE(QuantizedLayer("transformer_blocks.0.norm1", {}));
  EXPECT_FALSE(QuantizedLayer("transformer_blocks.0.norm1_context", {}));
  EXPECT_FALSE(QuantizedLayer("single_transformer_blocks.0.norm_linear", {}));
  EXPECT_FALSE(QuantizedLayer("x_embedder", {}));
  EXPECT_FALSE(QuantizedLayer("proj_out", {}));
  EXPECT_FALSE(QuantizedLayer("timestep_embedder.linear_1", {}));
  EXPECT_FALSE(QuantizedLayer("token_refiner.blocks.0.qkv", {})) << "not a top-level block list";
  EXPECT_FALSE(QuantizedLayer("blocks.27.cross_kv", {"blocks.27.*"}));
}

// plan's count of the FP8 layers' parameters (model_zoo/shapes/model_config.h) against the
// layers Fp8Layers picks in each family's module: within 2% at these tiny widths (the blocks'
// norms and modulation tables, d wide against the layers' d x d, count in the plan's; at real
// widths they are under 0.1%).
TEST(Fp8LinearTest, ThePlansCountOfFp8ParametersMatchesTheModules) {
  for (const char* name : {"pixart-alpha-tiny", "flux-dev-tiny", "sd3-medium-tiny",
                           "sd3.5-medium-tiny", "wan2.1-t2v-tiny", "hunyuanvideo-tiny"}) {
    const ModelConfig& config = *FindModelPreset(name);
    auto model = MakeDitModel(config);
    std::int64_t quantized = 0;
    for (const auto& item : model->module().named_modules("", false)) {
      const auto* linear = item.value()->as<torch::nn::LinearImpl>();
      if (linear && QuantizedLayer(item.key(), {}))
        quantized += linear->weight.numel() + (linear->bias.defined() ? linear->bias.numel() : 0);
    }
    ASSERT_GT(quantized, 0) << name;
    EXPECT_NEAR(double(Fp8ParameterCount(config)) / quantized, 1.0, 0.02) << name;
  }
}

// A Flux block stack in bf16 on CPU with every block projection in FP8 (per tensor: what the
// CPU GEMM takes): the output stays close to the bf16 model's, the single-stream block's split
// weight included, and freeing the high-precision weights changes nothing.
TEST(Fp8LinearTest, AFluxModelRunsItsBlocksInFp8) {
  c10::InferenceMode inference;
  const ModelConfig& config = *FindModelPreset("flux-dev-tiny");
  torch::manual_seed(0);
  auto model = MakeDitModel(config, torch::kBFloat16);
  const int latent = 8;
  auto x = torch::randn({1, config.in_channels, latent, latent}).to(torch::kBFloat16);
  auto t = torch::full({1}, 500.0);
  Conditioning conditioning = model->MakeConditioning(
      1, ImageShape{latent * config.vae_downsample, latent * config.vae_downsample, 0});
  conditioning.guidance = torch::full({1}, 3.5);
  conditioning = conditioning.To(torch::TensorOptions().dtype(torch::kBFloat16));
  ParallelContext single;
  const auto high = model->Forward(x, t, conditioning, single).to(torch::kFloat32);

  Fp8Layers fp8(model->module(), Fp8Scaling::kTensor, {});
  ASSERT_FALSE(fp8.quantized().empty());
  for (const std::string& path : fp8.quantized()) EXPECT_TRUE(QuantizedLayer(path, {})) << path;
  EXPECT_EQ(fp8.quantized().size() + fp8.kept().size(), [&] {
    std::size_t linears = 0;
    for (const auto& m : model->module().modules(false))
      if (m->as<torch::nn::LinearImpl>()) ++linears;
    return linears;
  }());
  EXPECT_EQ(fp8.bytes(), [&] {
    std::int64_t bytes = 0;
    for (const std::string& path : fp8.quantized())
      bytes +=
          model->module().named_modules()[path]->as<torch::nn::LinearImpl>()->weight.numel() + 4;
    return bytes;
  }());
  torch::Tensor quantized;
  try {
    ScopedFp8Layers active(&fp8);
    quantized = model->Forward(x, t, conditioning, single).to(torch::kFloat32);
  } catch (const c10::Error& e) {
    GTEST_SKIP() << "this LibTorch has no CPU FP8 GEMM: " << e.what_without_backtrace();
  }
  const double error = ((quantized - high).norm() / high.norm()).item<double>();
  RecordProperty("rel_l2_against_bf16", std::to_string(error));
  EXPECT_GT(error, 0.0);
  EXPECT_LT(error, 0.15);
  // Outside the scope the model runs its bf16 weights again.
  EXPECT_TRUE(torch::equal(model->Forward(x, t, conditioning, single).to(torch::kFloat32), high));

  EXPECT_GT(fp8.ReleaseHighPrecision(), 0);
  ScopedFp8Layers active(&fp8);
  EXPECT_TRUE(
      torch::equal(model->Forward(x, t, conditioning, single).to(torch::kFloat32), quantized));
}

}  // namespace
}  // namespace ditbench::fp8_linear_test
