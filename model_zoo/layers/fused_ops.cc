#include "model_zoo/layers/fused_ops.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <array>
#include <atomic>
#include <optional>
#include <string>

namespace ditbench {

namespace {

namespace F = torch::nn::functional;

// Whether oneDNN's linear ran for a dtype on this process: unknown until the first call.
enum class Support : int { kUnknown, kYes, kNo };

std::atomic<Support>& OneDnnSupport(torch::ScalarType dtype) {
  static std::array<std::atomic<Support>, 3> support{};  // fp32, bf16, fp16
  switch (dtype) {
    case torch::kBFloat16: return support[1];
    case torch::kHalf: return support[2];
    default: return support[0];
  }
}

bool OneDnnCandidate(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias) {
  const auto dtype = x.scalar_type();
  if (!x.device().is_cpu() || !at::hasMKLDNN() || x.dim() < 2) return false;
  if (dtype != torch::kFloat32 && dtype != torch::kBFloat16 && dtype != torch::kHalf) return false;
  if (weight.scalar_type() != dtype || weight.dim() != 2 || !weight.is_contiguous()) return false;
  if (bias.defined() && (bias.scalar_type() != dtype || !bias.is_contiguous())) return false;
  return OneDnnSupport(dtype).load(std::memory_order_relaxed) != Support::kNo;
}

// oneDNN's inner product with the bias and the epilogue as post-ops. Returns nothing where
// the op is not registered or refuses this dtype on this CPU (remembered for the dtype).
std::optional<torch::Tensor> OneDnnLinear(const torch::Tensor& x, const torch::Tensor& weight,
                                          const torch::Tensor& bias, Epilogue epilogue) {
  static const std::optional<c10::OperatorHandle> op =
      c10::Dispatcher::singleton().findOp({"mkldnn::_linear_pointwise", ""});
  auto& support = OneDnnSupport(x.scalar_type());
  if (!op) {
    support = Support::kNo;
    return std::nullopt;
  }
  const bool gelu = epilogue == Epilogue::kGeluTanh;
  torch::jit::Stack stack{x,
                          weight,
                          bias.defined() ? c10::IValue(bias) : c10::IValue(),
                          std::string(gelu ? "gelu" : "none"),
                          c10::List<std::optional<at::Scalar>>(),
                          gelu ? c10::IValue(std::string("tanh")) : c10::IValue()};
  try {
    op->callBoxed(&stack);
  } catch (const std::exception&) {
    // LibTorch's dtype check (c10::Error) or oneDNN's primitive creation (dnnl::error: a CPU,
    // or an ONEDNN_MAX_CPU_ISA cap, without the dtype's instructions). The first call per
    // dtype decides; a later refusal is a real error.
    if (support.load() == Support::kYes) throw;
    support = Support::kNo;
    return std::nullopt;
  }
  support = Support::kYes;
  return stack.at(0).toTensor();
}

}  // namespace

torch::Tensor UnfusedLinear(const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias, Epilogue epilogue) {
  auto y = torch::linear(x, weight, bias);
  return epilogue == Epilogue::kGeluTanh ? F::gelu(y, F::GELUFuncOptions().approximate("tanh"))
                                         : y;
}

torch::Tensor FusedLinear(const torch::Tensor& input, const torch::Tensor& weight,
                          const torch::Tensor& bias, Epilogue epilogue) {
  // A non-contiguous [B, N, D] input (joint attention's image slice of a CFG batch) would take
  // at::linear's batched-matmul path with a separate bias add: one copy makes it one GEMM.
  const torch::Tensor x = input.dim() > 2 && !input.is_contiguous() ? input.contiguous() : input;
  if (OneDnnCandidate(x, weight, bias)) {
    if (auto y = OneDnnLinear(x, weight, bias, epilogue)) return *std::move(y);
  }
  if (epilogue == Epilogue::kGeluTanh && x.is_cuda() && bias.defined() &&
      x.scalar_type() == weight.scalar_type()) {
    // cuBLASLt's GELU(tanh) epilogue; LibTorch falls back to a separate GELU where Lt cannot.
    auto rows = x.reshape({-1, x.size(-1)});
    auto y = at::_addmm_activation(bias, rows, weight.t(), 1, 1, /*use_gelu=*/true);
    auto shape = x.sizes().vec();
    shape.back() = weight.size(0);
    return y.view(shape);
  }
  return UnfusedLinear(x, weight, bias, epilogue);
}

torch::Tensor GatedResidual(const torch::Tensor& x, const torch::Tensor& gate,
                            const torch::Tensor& y) {
  return at::addcmul(x, gate.unsqueeze(1), y);
}

torch::Tensor Modulate(const torch::Tensor& x, const torch::Tensor& shift,
                       const torch::Tensor& scale) {
  return at::addcmul(shift.unsqueeze(1), x, 1 + scale.unsqueeze(1));
}

}  // namespace ditbench
