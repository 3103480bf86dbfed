#include "model_zoo/families/hunyuan_video_vae.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "model_zoo/families/vae_tiles.h"

namespace ditbench {
namespace {

// diffusers' defaults for framewise decoding: temporal tiles of 16 output frames (4 latent
// frames, plus the one before) every 12 (3 latent frames), blended over 4 frames.
constexpr int64_t kTileLatentFrames = 4;
constexpr int64_t kStrideLatentFrames = 3;
constexpr int64_t kTileFrames = 16;
constexpr int64_t kStrideFrames = 12;

// A causal convolution: edges replicated, kernel - 1 copies of the first frame before the clip.
class CausalConvImpl : public torch::nn::Module {
 public:
  CausalConvImpl(int64_t in, int64_t out, int64_t kernel) : kernel_(kernel) {
    conv_ = register_module("conv", torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, kernel)));
  }
  // x: this rank's band of rows under `split`: its halo rows come from the neighbours' bands.
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split) {
    const int64_t half = kernel_ / 2;
    if (kernel_ == 1) return conv_(x);
    if (!split.split())
      return conv_(torch::replication_pad3d(x, {half, half, half, half, kernel_ - 1, 0}));
    const auto rows = split.WithHalo(x, half, RowSplit::Edge::kReplicate);
    return conv_(torch::replication_pad3d(rows, {half, half, 0, 0, kernel_ - 1, 0}));
  }

 private:
  int64_t kernel_;
  torch::nn::Conv3d conv_{nullptr};
};
TORCH_MODULE(CausalConv);

torch::nn::GroupNorm Norm(int64_t channels, int64_t groups) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels).eps(1e-6));
}

class ResnetImpl : public torch::nn::Module {
 public:
  ResnetImpl(int64_t in, int64_t out, int64_t groups) {
    norm1_ = register_module("norm1", Norm(in, groups));
    conv1_ = register_module("conv1", CausalConv(in, out, 3));
    norm2_ = register_module("norm2", Norm(out, groups));
    conv2_ = register_module("conv2", CausalConv(out, out, 3));
    if (in != out) conv_shortcut_ = register_module("conv_shortcut", CausalConv(in, out, 1));
  }
  torch::Tensor forward(const torch::Tensor& input, const RowSplit& split) {
    const auto x = input.contiguous();
    auto h = conv1_->forward(torch::silu(split.Norm(norm1_, x)), split);
    h = conv2_->forward(torch::silu(split.Norm(norm2_, h)), split);
    return h + (conv_shortcut_ ? conv_shortcut_->forward(x, split) : x);
  }

 private:
  torch::nn::GroupNorm norm1_{nullptr}, norm2_{nullptr};
  CausalConv conv1_{nullptr}, conv2_{nullptr}, conv_shortcut_{nullptr};
};
TORCH_MODULE(Resnet);

// One head over every pixel of the clip, each frame's pixels seeing their own and earlier
// frames' (diffusers' prepare_causal_attention_mask: an additive 0 / -inf mask).
class CausalAttentionImpl : public torch::nn::Module {
 public:
  CausalAttentionImpl(int64_t c, int64_t groups) {
    group_norm_ = register_module("group_norm", Norm(c, groups));
    to_q_ = register_module("to_q", torch::nn::Linear(c, c));
    to_k_ = register_module("to_k", torch::nn::Linear(c, c));
    to_v_ = register_module("to_v", torch::nn::Linear(c, c));
    to_out_ = register_module("to_out", torch::nn::ModuleList(torch::nn::Linear(c, c)));
  }
  // x: this rank's band of rows under `split`; the keys and values are every band's.
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split) {
    const int64_t b = x.size(0), c = x.size(1), f = x.size(2), h = x.size(3), w = x.size(4);
    auto as_tokens = [](const torch::Tensor& t) {
      return t.permute({0, 2, 3, 4, 1}).flatten(1, 3);
    };
    // The GroupNorm over [B, C, F, h, w] is the one over [B, C, F h w] (diffusers' layout).
    const auto normed_rows = split.Norm(group_norm_, x);
    const auto normed = as_tokens(normed_rows);  // [B, F h w, C]: this band's queries
    const auto all = split.split() ? as_tokens(split.Gather(normed_rows)) : normed;
    auto head = [&](const torch::Tensor& in, torch::nn::Linear l) {
      return l(in).view({b, -1, 1, c}).transpose(1, 2);
    };
    const auto options = torch::TensorOptions().device(x.device());
    const auto query_frame = torch::arange(f, options).repeat_interleave(h * w);
    const auto key_frame = torch::arange(f, options).repeat_interleave(all.size(1) / f);
    const auto visible = key_frame.view({1, -1}) <= query_frame.view({-1, 1});  // [query, key]
    const auto mask =
        torch::zeros(visible.sizes(), x.options())
            .masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity())
            .view({1, 1, visible.size(0), visible.size(1)})
            .expand({b, 1, -1, -1});
    auto out = at::scaled_dot_product_attention(head(normed, to_q_), head(all, to_k_),
                                                head(all, to_v_), mask);
    out = to_out_[0]->as<torch::nn::LinearImpl>()->forward(out.transpose(1, 2).reshape({b, -1, c}));
    return out.unflatten(1, {f, h, w}).permute({0, 4, 1, 2, 3}) + x;
  }

 private:
  torch::nn::GroupNorm group_norm_{nullptr};
  torch::nn::Linear to_q_{nullptr}, to_k_{nullptr}, to_v_{nullptr};
  torch::nn::ModuleList to_out_{nullptr};
};
TORCH_MODULE(CausalAttention);

// Nearest upsampling of rows and columns, and of the frames after the first when `temporal`,
// then a causal convolution.
class UpsampleImpl : public torch::nn::Module {
 public:
  UpsampleImpl(int64_t c, bool temporal) : temporal_(temporal) {
    conv_ = register_module("conv", CausalConv(c, c, 3));
  }
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split) {
    const int64_t f = x.size(2), h = x.size(3), w = x.size(4);
    auto first = torch::upsample_nearest2d(x.select(2, 0), std::vector<int64_t>{2 * h, 2 * w}).unsqueeze(2);
    if (f == 1) return conv_->forward(first, split);
    auto rest = torch::upsample_nearest3d(x.narrow(2, 1, f - 1).contiguous(),
                                          std::vector<int64_t>{(temporal_ ? 2 : 1) * (f - 1), 2 * h, 2 * w});
    return conv_->forward(torch::cat({first, rest}, 2), split);
  }

 private:
  bool temporal_;
  CausalConv conv_{nullptr};
};
TORCH_MODULE(Upsample);

class UpBlockImpl : public torch::nn::Module {
 public:
  UpBlockImpl(int64_t in, int64_t out, int resnets, int64_t groups, bool upsample, bool temporal) {
    resnets_ = register_module("resnets", torch::nn::ModuleList());
    for (int i = 0; i < resnets; ++i, in = out) resnets_->push_back(Resnet(in, out, groups));
    if (upsample)
      upsamplers_ = register_module("upsamplers", torch::nn::ModuleList(Upsample(out, temporal)));
  }
  torch::Tensor forward(torch::Tensor x, const RowSplit& split) {
    for (const auto& resnet : *resnets_) x = resnet->as<ResnetImpl>()->forward(x, split);
    if (upsamplers_) x = upsamplers_[0]->as<UpsampleImpl>()->forward(x, split);
    return x;
  }

 private:
  torch::nn::ModuleList resnets_{nullptr}, upsamplers_{nullptr};
};
TORCH_MODULE(UpBlock);

class MidBlockImpl : public torch::nn::Module {
 public:
  MidBlockImpl(int64_t c, int64_t groups) {
    resnets_ = register_module("resnets",
                               torch::nn::ModuleList(Resnet(c, c, groups), Resnet(c, c, groups)));
    attentions_ = register_module("attentions", torch::nn::ModuleList(CausalAttention(c, groups)));
  }
  torch::Tensor forward(torch::Tensor x, const RowSplit& split) {
    x = resnets_[0]->as<ResnetImpl>()->forward(x, split);
    x = attentions_[0]->as<CausalAttentionImpl>()->forward(x, split);
    return resnets_[1]->as<ResnetImpl>()->forward(x, split);
  }

 private:
  torch::nn::ModuleList resnets_{nullptr}, attentions_{nullptr};
};
TORCH_MODULE(MidBlock);

class DecoderImpl : public torch::nn::Module {
 public:
  explicit DecoderImpl(const ModelConfig& c) {
    const auto& widths = c.vae_channels;
    const int levels = static_cast<int>(widths.size());
    const int64_t groups = c.vae_norm_groups;
    conv_in_ = register_module("conv_in", CausalConv(c.in_channels, widths.back(), 3));
    mid_block_ = register_module("mid_block", MidBlock(widths.back(), groups));
    up_blocks_ = register_module("up_blocks", torch::nn::ModuleList());
    int64_t in = widths.back();
    for (int i = 0; i < levels; ++i) {
      const int64_t out = widths[levels - 1 - i];
      const bool last = i == levels - 1;
      // diffusers' rule for a 4x temporal VAE: the two levels before the last double frames.
      const bool temporal = i >= levels - 3 && !last;
      up_blocks_->push_back(UpBlock(in, out, c.vae_layers + 1, groups, !last, temporal));
      in = out;
    }
    conv_norm_out_ = register_module("conv_norm_out", Norm(widths.front(), groups));
    conv_out_ = register_module("conv_out", CausalConv(widths.front(), 3, 3));
  }
  torch::Tensor forward(const torch::Tensor& z, const RowSplit& split) {
    auto x = mid_block_->forward(conv_in_->forward(z, split), split);
    for (const auto& block : *up_blocks_) x = block->as<UpBlockImpl>()->forward(x, split);
    return conv_out_->forward(torch::silu(split.Norm(conv_norm_out_, x)), split);
  }

 private:
  CausalConv conv_in_{nullptr}, conv_out_{nullptr};
  MidBlock mid_block_{nullptr};
  torch::nn::ModuleList up_blocks_{nullptr};
  torch::nn::GroupNorm conv_norm_out_{nullptr};
};
TORCH_MODULE(Decoder);

}  // namespace

HunyuanVideoVaeDecoderImpl::HunyuanVideoVaeDecoderImpl(const ModelConfig& c) : config_(c) {
  const auto& widths = c.vae_channels;
  TORCH_CHECK(c.vae_kind == VaeKind::kHunyuanVideo, c.name, ": not an AutoencoderKLHunyuanVideo");
  TORCH_CHECK(c.vae_temporal == 4, c.name, ": AutoencoderKLHunyuanVideo compresses time 4x only");
  TORCH_CHECK(widths.size() >= 3 && (1 << (widths.size() - 1)) == c.vae_downsample, c.name, ": ",
              widths.size(), " VAE levels do not upsample by ", c.vae_downsample);
  post_quant_conv_ = register_module(
      "post_quant_conv",
      torch::nn::Conv3d(torch::nn::Conv3dOptions(c.in_channels, c.in_channels, 1)));
  decoder_ = register_module("decoder", Decoder(c).ptr());
}

torch::Tensor HunyuanVideoVaeDecoderImpl::forward(const torch::Tensor& latent, int tile) {
  return DecodeUnscaled(latent / config_.vae_scaling, tile);
}

torch::Tensor HunyuanVideoVaeDecoderImpl::DecodeWhole(const torch::Tensor& z,
                                                      const RowSplit& whole) {
  const RowSplit split = whole.ForRows(z.size(-2));
  return split.Gather(
      decoder_->as<DecoderImpl>()->forward(post_quant_conv_(split.Shard(z)), split));
}

torch::Tensor HunyuanVideoVaeDecoderImpl::DecodeSpatial(const torch::Tensor& z, int tile) {
  if (tile <= 0) return DecodeWhole(z, split_);
  return DecodeInTiles(
      z, tile, config_.vae_downsample,
      [this](const torch::Tensor& part) { return DecodeWhole(part, RowSplit()); }, split_);
}

torch::Tensor HunyuanVideoVaeDecoderImpl::DecodeUnscaled(const torch::Tensor& z, int tile) {
  const int64_t frames = z.size(2);
  if (frames <= kTileLatentFrames) return DecodeSpatial(z, tile);
  std::vector<torch::Tensor> tiles;
  for (int64_t i = 0; i < frames; i += kStrideLatentFrames) {
    auto decoded = DecodeSpatial(z.narrow(2, i, std::min(kTileLatentFrames + 1, frames - i)), tile);
    tiles.push_back(i > 0 ? decoded.narrow(2, 1, decoded.size(2) - 1) : decoded);
  }
  std::vector<torch::Tensor> kept;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (i > 0) tiles[i] = BlendInto(tiles[i - 1], tiles[i], kTileFrames - kStrideFrames, 2);
    const int64_t keep = kStrideFrames + (i == 0 ? 1 : 0);
    kept.push_back(tiles[i].narrow(2, 0, std::min(keep, tiles[i].size(2))));
  }
  return torch::cat(kept, 2).narrow(2, 0, (frames - 1) * config_.vae_temporal + 1);
}

WeightRules HunyuanVideoVaeWeightRules(const ModelConfig&) {
  return {{"post_quant_conv", {"post_quant_conv"}}, {"decoder", {"decoder"}}};
}

}  // namespace ditbench
