// Model shapes and their analytic costs. Torch-free: the planner, validity rules, coordinator
// and worker all read the same presets, so a shape is defined exactly once.
//
// Presets follow diffusers' definitions (see /docs/models.md and the lessons on model shapes).
// `*-tiny` presets keep the architecture and shrink the dimensions so that every code path,
// parallel ones included, runs on a 2-core CPU in seconds.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

// Architecture families: one row each in model_zoo/shapes/family.cc (presets, diffusers class,
// cost) and model_zoo/families/family_models.cc (the LibTorch module, weight names).
enum class ModelFamily {
  kPixArt,  // DiT blocks: self-attention, cross-attention to text, MLP; AdaLN-single
  kMmDit,   // SD3: joint attention over image and text tokens, separate weights per stream
  kFlux,    // Flux: double-stream (MM-DiT) blocks followed by single-stream blocks
  kWan,     // Wan 2.1 / 2.2 video: self-attention with 3D RoPE, cross-attention to umT5 text
  kHunyuanVideo,  // HunyuanVideo: a token refiner, then Flux-like dual- and single-stream blocks
};
std::string_view FamilyName(ModelFamily family);

// How a family's image tokens see the prompt. Every preset sets it: the communication estimate,
// PipeFusion's stage-to-stage passing and the parallel layers read it, never the family.
enum class TextAttention {
  kCross,  // cross-attention to text that no block changes (PixArt, Wan)
  kJoint,  // joint attention over image + text tokens; blocks update the text stream (SD3,
           // Flux, HunyuanVideo)
};

// Which VAE decodes a model's latents (model_zoo/families/latent_decoder.h).
enum class VaeKind {
  kAutoencoderKL,  // diffusers' AutoencoderKL (images: PixArt, SD3, Flux)
  kWan,            // AutoencoderKLWan of Wan 2.1: causal 3D convolutions, a latent frame at a time
  kWanResidual,    // Wan 2.2's AutoencoderKLWan (is_residual): residual upsampling levels and
                   // pixels folded 2x2 into channels (vae_patch)
  kHunyuanVideo,   // AutoencoderKLHunyuanVideo: causal 3D convolutions, temporal tiles of 5 frames
};

struct ModelConfig {
  std::string name;
  ModelFamily family = ModelFamily::kPixArt;
  TextAttention text_attention = TextAttention::kCross;
  int depth = 28;            // transformer blocks (Flux: double-stream blocks)
  int single_blocks = 0;     // Flux: single-stream blocks after the double-stream ones
  int hidden = 1152;         // model width
  int heads = 16;            // attention heads (head dim = hidden / heads)
  int patch = 2;             // latent patch size
  int in_channels = 4;       // latent channels in
  int out_channels = 8;      // channels out (learned sigma doubles them)
  int vae_downsample = 8;    // pixels per latent pixel
  int text_tokens = 120;     // prompt length after the text encoder
  int text_dim = 4096;       // text-encoder width (projected to `hidden`)
  int mlp_ratio = 4;
  int ffn_dim = 0;           // MLP width when it is no multiple of hidden (Wan); 0: mlp_ratio x hidden
  // The blocks' norms' epsilon (PixArt's norm_eps, Wan's eps: its LayerNorms and q/k RMSNorms).
  double norm_eps = 1e-6;
  int time_freq_dim = 256;      // Wan's freq_dim: the sinusoidal timestep features' width
  bool cross_attn_norm = true;  // Wan: a LayerNorm (affine) before cross-attention
  double rope_theta = 256.0;    // HunyuanVideo: the rotary base of its 3D positions
  bool negative_prompt = true;  // classifier-free guidance batches a negative prompt
  int pooled_dim = 0;           // pooled text embedding width (Flux 768, SD3 2048); 0: none
  bool guidance_embed = false;  // Flux-dev: distilled guidance strength is a model input
  // Flux: rotary dimensions per position axis (text index, patch row, patch column); they sum
  // to head_dim.
  std::array<int, 3> rope_axes = {0, 0, 0};
  // The VAE decoder (model_zoo/families/vae.h): level widths, shallowest first (2^(levels - 1) must equal
  // vae_downsample), ResNet blocks per level (+1 in the decoder), latent scaling and shift, and
  // whether a 1x1 post-quantisation convolution comes first (SD's VAE; not Flux's or SD3's).
  std::vector<int> vae_channels = {128, 256, 512, 512};
  int vae_layers = 2;
  int vae_norm_groups = 32;  // GroupNorm groups (diffusers' norm_num_groups); divides every width
  double vae_scaling = 0.18215;
  double vae_shift = 0.0;
  bool vae_post_quant_conv = true;
  VaeKind vae_kind = VaeKind::kAutoencoderKL;
  // AutoencoderKLWan's patch_size: its decoder ends in 3 x vae_patch^2 channels, each pixel's
  // vae_patch x vae_patch neighbourhood, which the decode unfolds (vae_downsample counts it).
  int vae_patch = 1;
  // Per-channel latent statistics (AutoencoderKLWan's latents_mean and latents_std): the
  // pipeline decodes latent * std + mean; empty: the scalar scaling and shift above.
  std::vector<double> vae_latents_mean, vae_latents_std;
  // Position tables as diffusers builds them (PixArt, SD3): the table's unit spacing comes from
  // sample_size / patch patch rows (base size), divided by interpolation_scale (0: diffusers'
  // default, max(sample_size / 64, 1) for PixArt and 1 for SD3); SD3 crops the centre of a
  // pos_embed_max_size^2 table.
  int sample_size = 128;
  double interpolation_scale = 0;
  int pos_embed_max_size = 192;
  // SD3: positions come from a learned pos_embed_max_size^2 table cropped to the image's
  // patch grid, so larger grids have no positions.
  bool cropped_position_table = false;
  // Flux: the transformer's input and output are latents packed 2x2 into tokens (diffusers'
  // pipeline packs them; ditbench's module packs its own latent).
  bool packed_latents = false;
  // PixArt-alpha's micro-conditions: resolution and aspect-ratio embeddings added to the
  // timestep embedding (diffusers' use_additional_conditions).
  bool micro_conditions = false;
  // SD3.5: RMS norm on queries and keys in every joint block (Flux always has it).
  bool qk_norm = false;
  // SD3.5-medium (MMDiT-X): the joint blocks, by index, whose image stream has a second
  // self-attention over image tokens only (diffusers' dual_attention_layers). Indices at or
  // past `depth` (a preset with fewer blocks) name no block.
  std::vector<int> dual_attention_layers;
  // Video families: frames per latent frame after the first (the causal 3D VAE's temporal
  // compression: 4 for Wan's and HunyuanVideo's), so a clip has 4k + 1 frames; 0: an image
  // model, which takes no `frames`. `patch_t` is the temporal patch (1: one latent frame).
  int vae_temporal = 0;
  int patch_t = 1;
  // HunyuanVideo: self-attention blocks refining the text tokens before the joint blocks.
  int refiner_blocks = 0;
  // HunyuanVideo: diffusers' forward takes an encoder_attention_mask (ones for the prompt's
  // tokens, zeros for its padding) and masks the padding as attention keys everywhere, so it
  // never reaches a video token; `ditbench forward` gives each row its prompt's tokens only.
  bool text_mask = false;
  // The VAE decode's working set (plan's memory estimate): latent frames decoded at once (Wan
  // decodes one at a time with a feature cache; 0: the whole clip at once, as HunyuanVideo's
  // untiled decode does).
  int vae_decode_chunk = 0;
  // Wan 2.2 A14B: `experts` transformers of this shape, as diffusers' WanPipeline runs them
  // (transformer, transformer_2): the first (high-noise) expert for the steps whose timestep is
  // at or above expert_boundary x 1000 (the pipeline's boundary_ratio), the second below it,
  // each with its own CFG weight (guidance_scale, guidance_scale_2; 0: the family's default).
  // Every expert's weights are resident (ParameterCount counts them all); a step runs one.
  // 1: one transformer.
  int experts = 1;
  double expert_boundary = 0;
  double guidance_scale = 0, guidance_scale_2 = 0;

  int head_dim() const { return hidden / heads; }
  int mlp_width() const { return ffn_dim > 0 ? ffn_dim : mlp_ratio * hidden; }
  bool video() const { return vae_temporal > 0; }
  bool dual_attention(int block) const;
  // Blocks of [0, depth) with dual attention.
  int dual_attention_blocks() const;
  // All transformer blocks (PipeFusion stages split these).
  int total_blocks() const { return depth + single_blocks; }
};

// A CPU-sized VAE decoder for the tiny presets: four levels of 32 channels, one ResNet per
// level.
ModelConfig WithTinyVae(ModelConfig m);

// Dimensions a sweep may override on a preset (`model: {preset: pixart-alpha, depth: 14}`).
const std::vector<std::string>& OverridableDimensions();
// The preset `name` with `overrides` applied. On failure returns nullopt and says why in
// `*error` (unknown preset, unknown dimension, a value out of range, hidden % heads != 0).
std::optional<ModelConfig> ResolveModel(std::string_view name,
                                        const std::map<std::string, int>& overrides,
                                        std::string* error);

// The preset named `name`, or nullptr.
const ModelConfig* FindModelPreset(std::string_view name);
std::vector<std::string> ModelPresetNames();

// What a trial generates: an image of width x height pixels, or a video of `frames` such images
// (frames 0: an image; only video models, ModelConfig::video, take frames).
struct ImageShape {
  int width = 1024;
  int height = 1024;
  int frames = 0;
  bool operator==(const ImageShape&) const = default;
};

// The token grid of one sample: latent frames / patch_t x latent rows / patch x latent columns
// / patch (latent frames (frames - 1) / vae_temporal + 1 for a video, 1 for an image).
struct TokenGrid {
  int frames = 1;
  int rows = 0;
  int cols = 0;
  std::int64_t tokens() const { return std::int64_t(frames) * rows * cols; }
};
TokenGrid TokenGridOf(const ModelConfig& model, const ImageShape& shape);
// Latent frames of a video of `frames` frames (1 for an image).
int LatentFrames(const ModelConfig& model, int frames);
// Image (or video) tokens per sample: TokenGridOf(...).tokens().
std::int64_t ImageTokens(const ModelConfig& model, const ImageShape& shape);
// Analytic FLOPs of one forward over `samples` samples of `shape` (as below).
double ForwardFlops(const ModelConfig& model, const ImageShape& shape, int samples);

// Latent pixels per side for a square image of `resolution` pixels.
int LatentSize(const ModelConfig& model, int resolution);
// Patch rows (= columns) of the image token grid.
int TokenGridSize(const ModelConfig& model, int resolution);
// Image tokens per sample: TokenGridSize^2.
std::int64_t ImageTokens(const ModelConfig& model, int resolution);

// Analytic FLOPs of one transformer forward over `samples` samples (a multiply-add counts 2).
// Linear layers and attention matmuls only; norms, activations and softmax are left out
// (documented in docs/measurement.md; tests/model_zoo/shapes/model_config_test.cc pins the PixArt
// formula against a hand count; tests/model_zoo/families/flops_count_test.cc against the profiler).
// MM-DiT and Flux: joint attention over image + text tokens.
double ForwardFlops(const ModelConfig& model, int resolution, int samples);

// Parameter count of the model zoo's module for `model` (exact: every weight and bias), every
// expert's (ModelConfig::experts).
std::int64_t ParameterCount(const ModelConfig& model);

// Parameters of the layers `quant: fp8_*` runs in FP8 (model_zoo/layers/fp8_linear.h): the
// repeated blocks' (double- and single-stream) less their AdaLN modulation layers (6 x hidden
// outputs per stream of a double-stream block, 3 x hidden per single-stream block; PixArt's
// and Wan's blocks modulate from a table, no layer; SD3's last text stream 2 x hidden, SD3.5's
// dual-attention blocks 9 x hidden). The blocks' norms and modulation tables count too: under
// 0.1% at real widths, up to 2% at the tiny presets'. Every expert's.
std::int64_t Fp8ParameterCount(const ModelConfig& model);

}  // namespace ditbench
