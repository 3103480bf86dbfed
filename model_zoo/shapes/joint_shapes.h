// What the joint text-image families (SD3's MM-DiT, Flux) share without LibTorch: the preset
// shape and the analytic cost of double-stream, dual-attention and single-stream blocks.
#pragma once

#include <cstdint>
#include <string>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// The shared shape of the joint families: 16 latent channels, no learned sigma, no negative
// prompt unless set, a VAE without post-quantisation convolution.
ModelConfig JointPreset(std::string name, ModelFamily family, int depth, int hidden, int heads,
                        int text_tokens, int text_dim, int pooled_dim);

// How a family's joint blocks differ.
struct JointBlocks {
  bool last_text_pre_only = false;  // SD3: the last block's text stream only feeds q/k/v
  bool qk_norms = false;            // RMS norms on queries and keys (Flux always, SD3.5)
};

// FLOPs of one forward of one sample over `image_tokens` image tokens: embeddings, the
// double-stream blocks (with dual attention where the model has it), the single-stream blocks,
// the conditioning embedders and the final layer.
double JointForwardFlops(const ModelConfig& m, double image_tokens, JointBlocks blocks);
// The exact parameter count of the model zoo's joint module.
std::int64_t JointParameterCount(const ModelConfig& m, JointBlocks blocks);

}  // namespace ditbench
