// The work of a transformer forward that its FLOPs leave out (ForwardFlops counts linear layers
// and attention matmuls only): elements that are read and written rather than multiplied. The
// planner's cost model (plan/cost_model.h) prices them per element, so that a narrow model or
// one with a small head dimension, whose kernels are bound by memory rather than arithmetic,
// is not predicted from its FLOPs alone (docs/planner.md).
//
// Computed from the model's properties (text attention cross or joint, dual-attention layers,
// single-stream and refiner blocks), not its family: a new family with these properties needs
// nothing here. Approximate by design: a proxy for bytes moved, whose cost per element is fitted.
#pragma once

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

struct ForwardElements {
  // Attention scores: heads x queries x keys of every attention (the softmax, its scaling and
  // its exponentials run once per score; an attention's matmuls do 4 x head_dim FLOPs per
  // score, so a small head dimension means more scores per FLOP).
  double scores = 0;
  // Activations: tokens x width through every block (what the norms, modulations, activation
  // functions and residual adds read; a narrow model has more of them per FLOP).
  double activations = 0;
};

// One forward over `samples` samples of `shape`.
ForwardElements ForwardMemoryElements(const ModelConfig& model, const ImageShape& shape,
                                      int samples);

// The heads every tp rank attends with under Ulysses `ulysses` inside tensor parallelism `tp`,
// times tp: heads / tp rounded up to a multiple of ulysses (`pad_heads`: a Ulysses degree that
// does not divide them attends over zero heads besides). `heads` when nothing is padded.
// REQUIRES: tp divides heads; tp, ulysses >= 1.
int PaddedHeads(int heads, int tp, int ulysses);

// FLOPs one forward over `samples` samples of `shape` spends on padded heads: the attention
// matmuls (4 x head_dim per score) of every self- or joint attention Ulysses splits (PixArt's
// cross-attention and HunyuanVideo's token refiner are not split, nor padded). 0 unpadded.
double HeadPaddingFlops(const ModelConfig& model, const ImageShape& shape, int samples, int tp,
                        int ulysses);

}  // namespace ditbench
