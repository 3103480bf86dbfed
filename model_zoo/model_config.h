// Model shapes and their analytic costs. Torch-free: the planner, validity rules, coordinator
// and worker all read the same presets, so a shape is defined exactly once.
//
// Presets follow diffusers' definitions (see /docs/models.md and the lessons on model shapes).
// `*-tiny` presets keep the architecture and shrink the dimensions so that every code path,
// parallel ones included, runs on a 2-core CPU in seconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

enum class ModelFamily { kPixArt };

struct ModelConfig {
  std::string name;
  ModelFamily family = ModelFamily::kPixArt;
  int depth = 28;            // transformer blocks
  int hidden = 1152;         // model width
  int heads = 16;            // attention heads (head dim = hidden / heads)
  int patch = 2;             // latent patch size
  int in_channels = 4;       // latent channels in
  int out_channels = 8;      // channels out (learned sigma doubles them)
  int vae_downsample = 8;    // pixels per latent pixel
  int text_tokens = 120;     // prompt length after the text encoder
  int text_dim = 4096;       // text-encoder width (projected to `hidden`)
  int mlp_ratio = 4;
  bool negative_prompt = true;  // classifier-free guidance batches a negative prompt

  int head_dim() const { return hidden / heads; }
};

// The preset named `name`, or nullptr.
const ModelConfig* FindModelPreset(std::string_view name);
std::vector<std::string> ModelPresetNames();

// Latent pixels per side for a square image of `resolution` pixels.
int LatentSize(const ModelConfig& model, int resolution);
// Patch rows (= columns) of the image token grid.
int TokenGridSize(const ModelConfig& model, int resolution);
// Image tokens per sample: TokenGridSize^2.
std::int64_t ImageTokens(const ModelConfig& model, int resolution);

// Analytic FLOPs of one transformer forward over `samples` samples (a multiply-add counts 2).
// Linear layers and attention matmuls only; norms, activations and softmax are left out
// (documented in docs/measurement.md; tests/model_zoo/model_config_test.cc pins the formula).
double ForwardFlops(const ModelConfig& model, int resolution, int samples);

// Parameter count of the preset (exact for the model zoo's implementation).
std::int64_t ParameterCount(const ModelConfig& model);

}  // namespace ditbench
