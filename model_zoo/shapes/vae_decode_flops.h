// Analytic FLOPs of a VAE decode, from the model's VAE shape alone (no weights): what `plan`
// prices a `scope: pipeline` trial's decode by, and what the cost model fits its decode terms
// on, so that decoders of different cost per pixel (an image VAE, AutoencoderKLWan of Wan 2.1 or
// Wan 2.2, AutoencoderKLHunyuanVideo) are not one price per megapixel.
//
// Counted as FlopCounterMode counts diffusers' decode: 2 x multiply-adds of every convolution
// and linear (biases left out) and of the attention's two products; norms, activations,
// upsampling and blending are left out. The decode as ditbench and diffusers run it by default:
// AutoencoderKLWan a latent frame at a time (each temporal upsampler's convolution skips the
// first latent frame), AutoencoderKLHunyuanVideo in its temporal tiles of 5 latent frames every
// 3 when a clip has more than 4. Spatial tiles (`vae_tile`) are not counted: their overlap adds
// up to about 1/3 more.
#pragma once

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// FLOPs of decoding one sample (an image, or a clip of shape.frames frames) of `shape`.
double VaeDecodeFlops(const ModelConfig& model, const ImageShape& shape);

}  // namespace ditbench
