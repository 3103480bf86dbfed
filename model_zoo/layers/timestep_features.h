// The sinusoidal timestep features every family embeds its timestep (and Flux and HunyuanVideo
// their distilled guidance) from: diffusers' Timesteps(dim, flip_sin_to_cos=True, shift 0), the
// DiT convention. PixArt, SD3, Flux, Wan and HunyuanVideo call it with dim 256 and pass the
// result, cast to the activations' dtype, through their own embedding MLP.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace ditbench {

// [B] timesteps -> [B, dim] features in fp32: cos(t f_i) then sin(t f_i) for the dim / 2
// frequencies f_i = 10000^(-i / (dim / 2)), computed in fp32 on the timestep's device.
torch::Tensor TimestepFeatures(const torch::Tensor& timestep, int64_t dim);

}  // namespace ditbench
