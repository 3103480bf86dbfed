// Every fused path against the separate ops it replaces, within its dtype's bound: fp32 within
// float-order noise; bf16 within a few bf16 roundings (the fused forms round once, the separate
// ops after each op). The bounds hold on any CPU: they do not depend on which kernel runs.
#include "model_zoo/layers/fused_ops.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model_zoo/layers/dit_layers.h"

namespace ditbench::fused_ops_test {
namespace {

double RelativeError(const torch::Tensor& a, const torch::Tensor& b) {
  auto fa = a.to(torch::kFloat64), fb = b.to(torch::kFloat64);
  return ((fa - fb).norm() / fb.norm()).item<double>();
}

double Bound(torch::ScalarType dtype) { return dtype == torch::kFloat32 ? 1e-6 : 1e-2; }

class FusedOpsTest : public ::testing::TestWithParam<torch::ScalarType> {};

TEST_P(FusedOpsTest, LinearWithAndWithoutEpilogueEqualsTheSeparateOps) {
  c10::InferenceMode inference;
  torch::manual_seed(0);
  const auto dtype = GetParam();
  auto x = torch::randn({2, 37, 96}).to(dtype);
  auto weight = (torch::randn({160, 96}) / 10).to(dtype);
  auto bias = torch::randn({160}).to(dtype);
  for (Epilogue epilogue : {Epilogue::kNone, Epilogue::kGeluTanh}) {
    SCOPED_TRACE(epilogue == Epilogue::kNone ? "no epilogue" : "gelu");
    auto fused = FusedLinear(x, weight, bias, epilogue);
    auto unfused = UnfusedLinear(x, weight, bias, epilogue);
    ASSERT_EQ(fused.sizes(), unfused.sizes());
    EXPECT_EQ(fused.scalar_type(), dtype);
    EXPECT_LT(RelativeError(fused, unfused), Bound(dtype));
    // Without a bias, and on a non-contiguous input (a slice of the tokens' features).
    auto wide = torch::randn({2, 37, 192}).to(dtype).narrow(2, 50, 96);
    EXPECT_LT(RelativeError(FusedLinear(wide, weight, {}, epilogue),
                            UnfusedLinear(wide, weight, {}, epilogue)),
              Bound(dtype));
  }
  // The reference really differs between the epilogues (a GELU that never ran would pass).
  EXPECT_GT(RelativeError(FusedLinear(x, weight, bias, Epilogue::kGeluTanh),
                          UnfusedLinear(x, weight, bias, Epilogue::kNone)),
            0.1);
}

TEST_P(FusedOpsTest, GatedResidualAndModulationEqualTheSeparateOps) {
  c10::InferenceMode inference;
  torch::manual_seed(1);
  const auto dtype = GetParam();
  auto x = torch::randn({2, 33, 64}).to(dtype), y = torch::randn({2, 33, 64}).to(dtype);
  auto gate = torch::randn({2, 64}).to(dtype), shift = torch::randn({2, 64}).to(dtype);
  auto gated = GatedResidual(x, gate, y);
  EXPECT_LT(RelativeError(gated, x + gate.unsqueeze(1) * y), Bound(dtype));
  auto modulated = Modulate(x, shift, gate);
  EXPECT_LT(RelativeError(modulated, x * (1 + gate.unsqueeze(1)) + shift.unsqueeze(1)),
            Bound(dtype));
  // The residual stream stays row-major: every linear after it takes the 2-D GEMM path.
  EXPECT_TRUE(gated.is_contiguous());
  EXPECT_TRUE(modulated.is_contiguous());
  EXPECT_EQ(gated.scalar_type(), dtype);
  EXPECT_EQ(modulated.scalar_type(), dtype);
}

// diffusers' real form of the rotation: x * cos + rotate_half(x) * sin, cos and sin repeated
// for each (real, imaginary) pair.
torch::Tensor RealFormRotary(const torch::Tensor& x, const torch::Tensor& ids,
                             const std::array<int, 3>& axes, double theta) {
  std::vector<torch::Tensor> cos, sin;
  for (size_t axis = 0; axis < axes.size(); ++axis) {
    auto freqs = 1.0 / torch::pow(theta, torch::arange(0, axes[axis], 2, torch::kFloat64) /
                                             double(axes[axis]));
    auto angles = torch::outer(ids.select(1, int64_t(axis)), freqs);
    cos.push_back(angles.cos().repeat_interleave(2, 1));
    sin.push_back(angles.sin().repeat_interleave(2, 1));
  }
  auto c = torch::cat(cos, 1).to(torch::kFloat32).unsqueeze(0).unsqueeze(2);
  auto s = torch::cat(sin, 1).to(torch::kFloat32).unsqueeze(0).unsqueeze(2);
  auto xf = x.to(torch::kFloat32);
  auto pairs = xf.unflatten(-1, {-1, 2}).unbind(-1);
  auto rotated = torch::stack({-pairs[1], pairs[0]}, -1).flatten(-2);
  return (xf * c + rotated * s).to(x.scalar_type());
}

TEST_P(FusedOpsTest, ComplexRotaryEqualsTheRealForm) {
  c10::InferenceMode inference;
  torch::manual_seed(2);
  const auto dtype = GetParam();
  auto ids = torch::randint(0, 40, {12, 3}, torch::kFloat64);
  auto x = torch::randn({2, 12, 3, 32}).to(dtype);
  auto table = MakeRotaryTable(ids, {4, 14, 14}, 10000.0);
  auto ours = ApplyRotary(x, table);
  EXPECT_EQ(ours.scalar_type(), dtype);
  EXPECT_LT(RelativeError(ours, RealFormRotary(x, ids, {4, 14, 14}, 10000.0)),
            dtype == torch::kFloat32 ? 1e-6 : 4e-3);
  // Rows of the table follow their tokens.
  auto tail = ApplyRotary(x.narrow(1, 5, 7), table.Narrow(5, 7));
  EXPECT_TRUE(torch::equal(tail, ours.narrow(1, 5, 7)));
}

// RmsNorm's mean square as one fp32 reduction (||x||^2 / d) against diffusers' formula.
TEST_P(FusedOpsTest, RmsNormEqualsDiffusersFormula) {
  c10::InferenceMode inference;
  torch::manual_seed(6);
  const auto dtype = GetParam();
  RmsNorm norm(64);
  norm->to(dtype);
  {
    torch::NoGradGuard no_grad;
    norm->named_parameters()["weight"].copy_(torch::randn({64}));
  }
  auto x = (torch::randn({2, 7, 3, 64}) * 3).to(dtype);
  auto weight = norm->named_parameters()["weight"];
  auto xf = x.to(torch::kFloat32);
  auto expected = (xf * torch::rsqrt(xf.pow(2).mean(-1, true) + 1e-6)).to(dtype) * weight;
  auto got = norm(x);
  EXPECT_EQ(got.scalar_type(), dtype);
  EXPECT_LT(RelativeError(got, expected), Bound(dtype));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedOpsTest,
                         ::testing::Values(torch::kFloat32, torch::kBFloat16),
                         [](const auto& info) {
                           return std::string(info.param == torch::kFloat32 ? "fp32" : "bf16");
                         });

TEST(FusedOpsTest, AllZeroPositionsRotateByNothingAndSkipTheWork) {
  auto zeros = MakeRotaryTable(torch::zeros({6, 3}, torch::kFloat64), {4, 14, 14}, 10000.0);
  EXPECT_TRUE(zeros.identity);
  auto x = torch::randn({1, 6, 2, 32}).to(torch::kBFloat16);
  EXPECT_TRUE(ApplyRotary(x, zeros).is_same(x));
  auto ids = torch::zeros({6, 3}, torch::kFloat64);
  ids[3][1] = 1.0;
  EXPECT_FALSE(MakeRotaryTable(ids, {4, 14, 14}, 10000.0).identity);
}

TEST(FusedOpsCudaTest, GeluEpilogueAndRmsNormEqualTheSeparateOps) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  c10::InferenceMode inference;
  torch::manual_seed(3);
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    auto options = torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
    auto x = torch::randn({2, 300, 256}, options);
    auto weight = torch::randn({512, 256}, options) / 16, bias = torch::randn({512}, options);
    EXPECT_LT(RelativeError(FusedLinear(x, weight, bias, Epilogue::kGeluTanh).cpu(),
                            UnfusedLinear(x, weight, bias, Epilogue::kGeluTanh).cpu()),
              Bound(dtype));
    RmsNorm norm(256);
    norm->to(torch::kCUDA, dtype);
    auto on_cuda = norm(x).cpu();
    norm->to(torch::kCPU);
    EXPECT_LT(RelativeError(on_cuda, norm(x.cpu())), Bound(dtype));
  }
}

}  // namespace
}  // namespace ditbench::fused_ops_test
