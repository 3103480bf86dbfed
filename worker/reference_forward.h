// One rank of `ditbench forward` (README.md, "The CLI"): one transformer forward, or one VAE
// decode, on the weights of a diffusers-format folder, with inputs named as diffusers' forward
// names them, so that its output can be compared with diffusers' own (tests/reference/).
//
// Inputs (a safetensors file): PixArt hidden_states, encoder_hidden_states, timestep, and with
// micro-conditions resolution and aspect_ratio; SD3 hidden_states, encoder_hidden_states,
// pooled_projections, timestep; Flux hidden_states (packed tokens), encoder_hidden_states,
// pooled_projections, timestep, guidance, img_ids, txt_ids (the standard (0, row, column) grid
// of the latent, square or not, and zeros: the positions ditbench builds); Wan hidden_states
// [B, C, F, H, W], encoder_hidden_states, timestep; HunyuanVideo the same with
// pooled_projections, guidance (as its pipeline passes it: guidance_scale x 1000) and
// encoder_attention_mask (ones, then zeros for padding: each row attends to its prompt's tokens
// only, one forward per row when their lengths differ); a VAE latent_sample ([B, C, h, w], or [B,
// C, F, h, w] for a video VAE), decoded as the class's decode does (no scaling). Output: `sample`
// in fp32, written by world rank 0.
//
// Ranks: torchrun's environment (WORLD_SIZE = ulysses x ring x tp), as `ditbench run` starts them.
#pragma once

#include <filesystem>
#include <string>

namespace ditbench {

struct ReferenceForwardOptions {
  std::filesystem::path model_dir;  // config.json + *.safetensors
  std::filesystem::path inputs;
  std::filesystem::path output;
  int ulysses = 1;
  int ring = 1;
  int tp = 1;  // tensor parallelism: each rank loads its shard of the split layers
  std::string precision = "fp32";  // fp32, tf32, bf16, fp16
  std::string variant;  // diffusers' weights variant: which files of the folder (diffusers_files.h)
  int vae_tile = 0;  // a VAE folder: decode in tiles of this many pixels (model_zoo/families/vae_tiles.h)
  // > 0: after the forward, time this many more (weights loaded, inputs on the device) and
  // print {"forward_ms": [...]} on stdout (rank 0), for bench/reference_speed.py.
  int repeats = 0;
};

// Returns the process exit code: 0 ok, 2 bad input (config, weights, inputs, degrees), 1 any
// other failure; the reason goes to stderr as one line.
int RunReferenceForward(const ReferenceForwardOptions& options);

}  // namespace ditbench
