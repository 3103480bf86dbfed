// Fewer passes over the activations for the elementwise work around every GEMM of a DiT block.
// Each fused form computes what its unfused counterpart (below, kept for the tests and the
// fallback) computes, rounding once instead of after every op:
//   - a dense layer's bias applied inside the GEMM: LibTorch's addmm first copies the broadcast
//     bias into the output (on the CPU that copy is about a fifth of a bf16 linear's time);
//   - GELU(tanh) as the GEMM's epilogue (fc1 of every MLP): oneDNN's post-op on the CPU,
//     cuBLASLt's epilogue on CUDA (at::_addmm_activation);
//   - the gated residual x + gate * y and the AdaLN modulation x * (1 + scale) + shift as one
//     addcmul each instead of a multiply and an add.
// On the CPU the GEMM paths go through oneDNN's inner product (`mkldnn::_linear_pointwise`,
// the kernel torch.compile's CPU backend emits); where this LibTorch or this CPU cannot run it
// for a dtype (bf16 needs AVX-512 or AVX-NE-CONVERT), the unfused path runs instead, decided
// once per dtype.
#pragma once

#include <torch/torch.h>

namespace ditbench {

enum class Epilogue { kNone, kGeluTanh };

// x W^T + b, then the epilogue; x [..., in], weight [out, in], bias [out] or undefined.
torch::Tensor FusedLinear(const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias, Epilogue epilogue);
// The same as separate LibTorch ops (at::linear, then at::gelu).
torch::Tensor UnfusedLinear(const torch::Tensor& x, const torch::Tensor& weight,
                            const torch::Tensor& bias, Epilogue epilogue);

// x + gate * y with a per-sample gate [B, D] broadcast over the tokens of x, y [B, N, D].
torch::Tensor GatedResidual(const torch::Tensor& x, const torch::Tensor& gate,
                            const torch::Tensor& y);
// x * (1 + scale) + shift with [B, D] modulation broadcast over the tokens of x [B, N, D].
torch::Tensor Modulate(const torch::Tensor& x, const torch::Tensor& shift,
                       const torch::Tensor& scale);

}  // namespace ditbench
