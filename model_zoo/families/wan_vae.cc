#include "model_zoo/families/wan_vae.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model_zoo/families/vae_tiles.h"

namespace ditbench {
namespace {

// Frames of the past a causal convolution of kernel 3 over time sees.
constexpr int64_t kPastFrames = 2;

// Kernel 3 over time and space, zero-padded in space; time is padded by CausalConv.
torch::nn::Conv3d Causal3(int64_t in, int64_t out) {
  return torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, 3).padding({0, 1, 1}));
}

// conv over x [B, C, T, H, W] with `past` frames (the cache; may be undefined) and zeros before
// it, so that every output frame sees its two predecessors; the cache's slot then holds the last
// two frames of x (one of x and one of the old slot when x has a single frame).
torch::Tensor CausalConv(torch::nn::Conv3d conv, const torch::Tensor& x, CausalCache& cache) {
  torch::Tensor& slot = cache.Next();
  const int64_t frames = x.size(2);
  torch::Tensor keep = x.narrow(2, std::max<int64_t>(0, frames - kPastFrames),
                                std::min(frames, kPastFrames));
  if (keep.size(2) < kPastFrames && slot.defined())
    keep = torch::cat({slot.narrow(2, slot.size(2) - 1, 1), keep}, 2);
  std::vector<torch::Tensor> parts;
  const int64_t cached = slot.defined() ? slot.size(2) : 0;
  if (cached < kPastFrames) {
    auto shape = x.sizes().vec();
    shape[2] = kPastFrames - cached;
    parts.push_back(torch::zeros(shape, x.options()));
  }
  if (cached > 0) parts.push_back(slot);
  parts.push_back(x);
  slot = keep.clone();
  return cache.split.Conv(conv, torch::cat(parts, 2));
}

// diffusers' WanRMS_norm: x / ||x|| over channels x sqrt(channels) x gain, per position.
class ChannelRmsNormImpl : public torch::nn::Module {
 public:
  ChannelRmsNormImpl(int64_t channels, int spatial_dims)
      : scale_(std::sqrt(static_cast<double>(channels))) {
    std::vector<int64_t> shape(1 + spatial_dims, 1);
    shape[0] = channels;
    gamma_ = register_parameter("gamma", torch::ones(shape));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto norm = torch::linalg_vector_norm(x, 2, {1}, /*keepdim=*/true).clamp_min(1e-12);
    return x / norm.expand_as(x) * scale_ * gamma_;
  }

 private:
  double scale_;
  torch::Tensor gamma_;
};
TORCH_MODULE(ChannelRmsNorm);

class ResidualImpl : public torch::nn::Module {
 public:
  ResidualImpl(int64_t in, int64_t out) {
    norm1_ = register_module("norm1", ChannelRmsNorm(in, 3));
    conv1_ = register_module("conv1", Causal3(in, out));
    norm2_ = register_module("norm2", ChannelRmsNorm(out, 3));
    conv2_ = register_module("conv2", Causal3(out, out));
    if (in != out)
      conv_shortcut_ = register_module("conv_shortcut",
                                       torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, 1)));
  }
  torch::Tensor forward(const torch::Tensor& x, CausalCache& cache) {
    auto h = conv_shortcut_ ? conv_shortcut_(x) : x;
    auto y = CausalConv(conv1_, torch::silu(norm1_(x)), cache);
    y = CausalConv(conv2_, torch::silu(norm2_(y)), cache);
    return y + h;
  }

 private:
  ChannelRmsNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Conv3d conv1_{nullptr}, conv2_{nullptr}, conv_shortcut_{nullptr};
};
TORCH_MODULE(Residual);

// [B, C, T, H, W] <-> [B T, C, H, W]: 2D layers run on every frame alone.
torch::Tensor Frames(const torch::Tensor& x) {
  return x.permute({0, 2, 1, 3, 4}).reshape({x.size(0) * x.size(2), x.size(1), x.size(3), x.size(4)});
}
torch::Tensor Clip(const torch::Tensor& frames, int64_t batch) {
  return frames.view({batch, frames.size(0) / batch, frames.size(1), frames.size(2), frames.size(3)})
      .permute({0, 2, 1, 3, 4});
}

// Single-head self-attention over each frame's pixels.
class FrameAttentionImpl : public torch::nn::Module {
 public:
  explicit FrameAttentionImpl(int64_t c) {
    norm_ = register_module("norm", ChannelRmsNorm(c, 2));
    to_qkv_ = register_module("to_qkv", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, 3 * c, 1)));
    proj_ = register_module("proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c, 1)));
  }
  // x: this rank's band of rows under `split`; the keys and values are every band's.
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split) {
    const int64_t b = x.size(0), c = x.size(1), h = x.size(3), w = x.size(4);
    auto frames = norm_(Frames(x));
    const int64_t n = frames.size(0);
    auto qkv = to_qkv_(frames);  // [n, 3c, h, w]
    const auto kv = split.split() ? split.Gather(qkv.narrow(1, c, 2 * c)) : qkv.narrow(1, c, 2 * c);
    auto heads = [n](const torch::Tensor& t) {  // [n, c, rows, w] -> one head [n, 1, rows w, c]
      return t.reshape({n, 1, t.size(1), -1}).transpose(2, 3);
    };
    auto attended = at::scaled_dot_product_attention(
        heads(qkv.narrow(1, 0, c)), heads(kv.narrow(1, 0, c)), heads(kv.narrow(1, c, c)));
    auto out = proj_(attended.squeeze(1).permute({0, 2, 1}).reshape({n, c, h, w}));
    return Clip(out, b) + x;
  }

 private:
  ChannelRmsNorm norm_{nullptr};
  torch::nn::Conv2d to_qkv_{nullptr}, proj_{nullptr};
};
TORCH_MODULE(FrameAttention);

// 2x nearest upsampling and a 3x3 convolution to `out` channels (Wan 2.1: half the width); in
// temporal levels first a causal convolution to twice the width whose halves become two frames
// per frame (not on the first latent frame, which stays one frame).
class WanUpsampleImpl : public torch::nn::Module {
 public:
  WanUpsampleImpl(int64_t c, int64_t out, bool temporal) {
    resample_ = register_module("resample", torch::nn::ModuleList());
    resample_->push_back(torch::nn::Identity());  // diffusers' nn.Upsample: no parameters
    conv_ = torch::nn::Conv2d(torch::nn::Conv2dOptions(c, out, 3).padding(1));
    resample_->push_back(conv_);
    if (temporal)
      time_conv_ = register_module(
          "time_conv", torch::nn::Conv3d(torch::nn::Conv3dOptions(c, 2 * c, {3, 1, 1})));
  }
  torch::Tensor forward(torch::Tensor x, CausalCache& cache) {
    const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
    if (time_conv_) {
      if (cache.chunk == 0) {
        cache.Next();  // its slot stays empty: the next frame's past is zeros
      } else {
        x = CausalConv(time_conv_, x, cache).reshape({b, 2, c, t, h, w});
        x = torch::stack({x.select(1, 0), x.select(1, 1)}, 3).reshape({b, c, 2 * t, h, w});
      }
    }
    auto frames = Frames(x);
    frames = torch::upsample_nearest2d(frames, std::vector<int64_t>{2 * h, 2 * w});
    return Clip(cache.split.Conv(conv_, frames), b);
  }

 private:
  torch::nn::ModuleList resample_{nullptr};
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::Conv3d time_conv_{nullptr};
};
TORCH_MODULE(WanUpsample);

// diffusers' DupUp3D, the residual levels' shortcut (no parameters): x [B, C, T, H, W] with each
// channel repeated over `out` channels x `frames` frames x 2x2 pixels -> [B, out, frames T, 2H,
// 2W], less the first frames - 1 frames on the first latent frame (as the upsampler's output).
// REQUIRES: out x frames x 4 is a multiple of C.
torch::Tensor RepeatUp(const torch::Tensor& x, int64_t out, int64_t frames, bool first_chunk) {
  const int64_t b = x.size(0), t = x.size(2), h = x.size(3), w = x.size(4);
  const int64_t repeats = out * frames * 4 / x.size(1);
  auto y = x.repeat_interleave(repeats, 1)
               .view({b, out, frames, 2, 2, t, h, w})
               .permute({0, 1, 5, 2, 6, 3, 7, 4})
               .reshape({b, out, t * frames, 2 * h, 2 * w});
  return first_chunk ? y.narrow(2, frames - 1, y.size(2) - (frames - 1)) : y;
}

// A level: residual blocks, then (but in the last level) the upsampler. Wan 2.1's upsampler
// halves the width (`upsamplers.0`); Wan 2.2's residual level keeps it (`upsampler`) and adds
// its input, repeated up to the output's shape (RepeatUp).
class UpBlockImpl : public torch::nn::Module {
 public:
  UpBlockImpl(int64_t in, int64_t out, int resnets, bool upsample, bool temporal, bool residual)
      : out_(out), frames_(temporal ? 2 : 1), residual_(residual && upsample) {
    resnets_ = register_module("resnets", torch::nn::ModuleList());
    for (int i = 0; i < resnets; ++i, in = out) resnets_->push_back(Residual(in, out));
    if (upsample && residual) {
      upsampler_ = register_module("upsampler", WanUpsample(out, out, temporal));
    } else if (upsample) {
      upsampler_ = WanUpsample(out, out / 2, temporal);
      upsamplers_ = register_module("upsamplers", torch::nn::ModuleList(upsampler_));
    }
  }
  torch::Tensor forward(torch::Tensor x, CausalCache& cache) {
    const torch::Tensor input = residual_ ? x : torch::Tensor();  // kept only where added
    for (const auto& resnet : *resnets_) x = resnet->as<ResidualImpl>()->forward(x, cache);
    if (upsampler_) x = upsampler_->forward(x, cache);
    if (residual_) x = x + RepeatUp(input, out_, frames_, cache.chunk == 0);
    return x;
  }

 private:
  int64_t out_, frames_;
  bool residual_;
  torch::nn::ModuleList resnets_{nullptr}, upsamplers_{nullptr};
  WanUpsample upsampler_{nullptr};
};
TORCH_MODULE(UpBlock);

class MidBlockImpl : public torch::nn::Module {
 public:
  explicit MidBlockImpl(int64_t c) {
    resnets_ = register_module("resnets", torch::nn::ModuleList(Residual(c, c), Residual(c, c)));
    attentions_ = register_module("attentions", torch::nn::ModuleList(FrameAttention(c)));
  }
  torch::Tensor forward(torch::Tensor x, CausalCache& cache) {
    x = resnets_[0]->as<ResidualImpl>()->forward(x, cache);
    x = attentions_[0]->as<FrameAttentionImpl>()->forward(x, cache.split);
    return resnets_[1]->as<ResidualImpl>()->forward(x, cache);
  }

 private:
  torch::nn::ModuleList resnets_{nullptr}, attentions_{nullptr};
};
TORCH_MODULE(MidBlock);

class Decoder3dImpl : public torch::nn::Module {
 public:
  explicit Decoder3dImpl(const ModelConfig& c) {
    const auto& widths = c.vae_channels;
    const int levels = static_cast<int>(widths.size());
    const bool residual = c.vae_kind == VaeKind::kWanResidual;
    int temporal = 0;
    for (int t = c.vae_temporal; t > 1; t /= 2) ++temporal;
    conv_in_ = register_module("conv_in", Causal3(c.in_channels, widths.back()));
    mid_block_ = register_module("mid_block", MidBlock(widths.back()));
    up_blocks_ = register_module("up_blocks", torch::nn::ModuleList());
    int64_t in = widths.back();
    for (int i = 0; i < levels; ++i) {
      const int64_t out = widths[levels - 1 - i];
      const bool upsample = i + 1 < levels;
      up_blocks_->push_back(UpBlock(in, out, c.vae_layers + 1, upsample, i < temporal, residual));
      in = upsample && !residual ? out / 2 : out;
    }
    norm_out_ = register_module("norm_out", ChannelRmsNorm(widths.front(), 3));
    conv_out_ = register_module("conv_out", Causal3(widths.front(), 3 * c.vae_patch * c.vae_patch));
  }
  torch::Tensor forward(const torch::Tensor& z, CausalCache& cache) {
    auto x = CausalConv(conv_in_, z, cache);
    x = mid_block_(x, cache);
    for (const auto& block : *up_blocks_) x = block->as<UpBlockImpl>()->forward(x, cache);
    return CausalConv(conv_out_, torch::silu(norm_out_(x)), cache);
  }

 private:
  torch::nn::Conv3d conv_in_{nullptr}, conv_out_{nullptr};
  MidBlock mid_block_{nullptr};
  torch::nn::ModuleList up_blocks_{nullptr};
  ChannelRmsNorm norm_out_{nullptr};
};
TORCH_MODULE(Decoder3d);

}  // namespace

torch::Tensor& CausalCache::Next() {
  if (next == slots.size()) slots.emplace_back();
  return slots[next++];
}

WanVaeDecoderImpl::WanVaeDecoderImpl(const ModelConfig& c) : config_(c) {
  const auto& widths = c.vae_channels;
  TORCH_CHECK(c.vae_kind == VaeKind::kWan || c.vae_kind == VaeKind::kWanResidual, c.name,
              ": not an AutoencoderKLWan");
  TORCH_CHECK(c.vae_patch >= 1 && !widths.empty() &&
                  (1 << (widths.size() - 1)) * c.vae_patch == c.vae_downsample,
              c.name, ": ", widths.size(), " VAE levels and patch ", c.vae_patch,
              " do not upsample by ", c.vae_downsample);
  TORCH_CHECK(std::all_of(widths.begin(), widths.end(), [](int w) { return w > 0 && w % 2 == 0; }),
              c.name, ": every VAE width must be even");
  TORCH_CHECK(c.vae_latents_mean.size() == size_t(c.in_channels) &&
                  c.vae_latents_std.size() == size_t(c.in_channels),
              c.name, ": AutoencoderKLWan needs latents_mean and latents_std per latent channel");
  post_quant_conv_ = register_module(
      "post_quant_conv",
      torch::nn::Conv3d(torch::nn::Conv3dOptions(c.in_channels, c.in_channels, 1)));
  decoder_ = register_module("decoder", Decoder3d(c).ptr());
}

torch::Tensor WanVaeDecoderImpl::forward(const torch::Tensor& latent, int tile) {
  auto channels = [&](const std::vector<double>& values) {
    return torch::tensor(values, torch::kFloat32)
        .view({1, -1, 1, 1, 1})
        .to(latent.device(), latent.scalar_type());
  };
  const torch::Tensor inverse_std = 1.0 / channels(config_.vae_latents_std);
  return DecodeUnscaled(latent / inverse_std + channels(config_.vae_latents_mean), tile);
}

torch::Tensor WanVaeDecoderImpl::DecodeUnscaled(const torch::Tensor& z, int tile) {
  if (tile > 0)
    return DecodeInTiles(
        z, tile, config_.vae_downsample,
        [this](const torch::Tensor& part) { return Unpatchify(DecodeFrames(part, RowSplit())); },
        split_);
  // The unfolding is per pixel: each band unfolds its own rows.
  const RowSplit split = split_.ForRows(z.size(-2));
  return split.Gather(Unpatchify(DecodeFrames(split.Shard(z), split))).clamp(-1.0, 1.0);
}

torch::Tensor WanVaeDecoderImpl::Unpatchify(const torch::Tensor& x) const {
  const int64_t p = config_.vae_patch;
  if (p == 1) return x;
  const int64_t b = x.size(0), t = x.size(2), h = x.size(3), w = x.size(4);
  // Channel c p^2 + i p + j is pixel (j, i) of channel c's p x p patch: i runs along columns.
  return x.view({b, x.size(1) / (p * p), p, p, t, h, w})
      .permute({0, 1, 4, 5, 3, 6, 2})
      .reshape({b, x.size(1) / (p * p), t, h * p, w * p});
}

torch::Tensor WanVaeDecoderImpl::DecodeFrames(const torch::Tensor& z, const RowSplit& split) {
  auto& decoder = *decoder_->as<Decoder3dImpl>();
  const torch::Tensor x = post_quant_conv_(z);
  CausalCache cache;
  cache.split = split;
  std::vector<torch::Tensor> frames;
  for (int64_t i = 0; i < x.size(2); ++i) {
    cache.next = 0;
    cache.chunk = static_cast<int>(i);
    frames.push_back(decoder.forward(x.narrow(2, i, 1), cache));
  }
  return torch::cat(frames, 2);
}

WeightRules WanVaeWeightRules(const ModelConfig&) {
  return {{"post_quant_conv", {"post_quant_conv"}}, {"decoder", {"decoder"}}};
}

}  // namespace ditbench
