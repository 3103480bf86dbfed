#include "model_zoo/families/vae.h"

#include <string>
#include <vector>

#include "model_zoo/families/vae_tiles.h"
#include "model_zoo/parallel/parallel_attention.h"

namespace ditbench {
namespace {

torch::nn::GroupNorm Norm(int64_t channels, int64_t groups) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels).eps(1e-6));
}

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2));
}

}  // namespace

VaeResnetBlockImpl::VaeResnetBlockImpl(int64_t in, int64_t out, int64_t groups) {
  norm1_ = register_module("norm1", Norm(in, groups));
  conv1_ = register_module("conv1", Conv(in, out, 3));
  norm2_ = register_module("norm2", Norm(out, groups));
  conv2_ = register_module("conv2", Conv(out, out, 3));
  if (in != out) conv_shortcut_ = register_module("conv_shortcut", Conv(in, out, 1));
}

torch::Tensor VaeResnetBlockImpl::forward(const torch::Tensor& x, const RowSplit& split) {
  auto h = split.Conv(conv1_, torch::silu(split.Norm(norm1_, x)));
  h = split.Conv(conv2_, torch::silu(split.Norm(norm2_, h)));
  return (conv_shortcut_ ? conv_shortcut_(x) : x) + h;
}

VaeAttentionImpl::VaeAttentionImpl(int64_t c, int64_t groups) {
  group_norm_ = register_module("group_norm", Norm(c, groups));
  to_q_ = register_module("to_q", torch::nn::Linear(c, c));
  to_k_ = register_module("to_k", torch::nn::Linear(c, c));
  to_v_ = register_module("to_v", torch::nn::Linear(c, c));
  to_out_ = register_module("to_out", torch::nn::Linear(c, c));
}

torch::Tensor VaeAttentionImpl::forward(const torch::Tensor& x, const RowSplit& split) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  // [B, C, h, w] -> [B, hw, C]: this band's queries, every band's keys and values.
  auto as_tokens = [&](const torch::Tensor& t) { return t.flatten(2).transpose(1, 2); };
  const auto normed = split.Norm(group_norm_, x);
  const auto tokens = as_tokens(normed),
             all = split.split() ? as_tokens(split.Gather(normed)) : tokens;
  auto head = [&](const torch::Tensor& in, const torch::nn::Linear& l) {
    return torch::linear(in, l->weight, l->bias).unsqueeze(2);  // one head: [B, n, 1, C]
  };
  auto attended = Attention(head(tokens, to_q_), head(all, to_k_), head(all, to_v_)).squeeze(2);
  auto out = torch::linear(attended, to_out_->weight, to_out_->bias);
  return x + out.transpose(1, 2).reshape({b, c, h, w});
}

VaeDecoderImpl::VaeDecoderImpl(const ModelConfig& c) : config_(c) {
  const auto& widths = c.vae_channels;  // shallowest level first, as diffusers lists them
  TORCH_CHECK(!widths.empty() && (1 << (widths.size() - 1)) == c.vae_downsample,
              c.name, ": ", widths.size(), " VAE levels do not upsample by ", c.vae_downsample);
  const int64_t z = c.in_channels, top = widths.back();
  if (c.vae_post_quant_conv)
    post_quant_conv_ = register_module("post_quant_conv", Conv(z, z, 1));
  conv_in_ = register_module("conv_in", Conv(z, top, 3));
  mid_resnets_ = register_module("mid_resnets", torch::nn::ModuleList());
  const int64_t groups = c.vae_norm_groups;
  mid_resnets_->push_back(VaeResnetBlock(top, top, groups));
  mid_resnets_->push_back(VaeResnetBlock(top, top, groups));
  mid_attention_ = register_module("mid_attention", VaeAttention(top, groups));
  up_resnets_ = register_module("up_resnets", torch::nn::ModuleList());
  upsamplers_ = register_module("upsamplers", torch::nn::ModuleList());
  int64_t in = top;
  for (int level = static_cast<int>(widths.size()) - 1; level >= 0; --level) {
    const int64_t out = widths[level];
    for (int i = 0; i <= c.vae_layers; ++i) {
      up_resnets_->push_back(VaeResnetBlock(in, out, groups));
      in = out;
    }
    resnets_per_level_.push_back(c.vae_layers + 1);
    if (level > 0) upsamplers_->push_back(Conv(out, out, 3));
  }
  conv_norm_out_ = register_module("conv_norm_out", Norm(widths.front(), groups));
  conv_out_ = register_module("conv_out", Conv(widths.front(), 3, 3));
}

torch::Tensor VaeDecoderImpl::forward(const torch::Tensor& latent, int tile) {
  const torch::Tensor z = latent / config_.vae_scaling + config_.vae_shift;
  return tile > 0 ? DecodeTiled(z, tile) : Decode(z);
}

torch::Tensor VaeDecoderImpl::DecodeTiled(const torch::Tensor& z, int tile) {
  return DecodeInTiles(
      z, tile, config_.vae_downsample,
      [this](const torch::Tensor& part) { return DecodeBand(part, RowSplit()); }, split_);
}

torch::Tensor VaeDecoderImpl::Decode(const torch::Tensor& z) {
  const RowSplit split = split_.ForRows(z.size(-2));
  return split.Gather(DecodeBand(split.Shard(z), split));
}

torch::Tensor VaeDecoderImpl::DecodeBand(const torch::Tensor& z, const RowSplit& split) {
  auto x = z;
  if (post_quant_conv_) x = post_quant_conv_(x);
  x = split.Conv(conv_in_, x);
  x = mid_resnets_[0]->as<VaeResnetBlockImpl>()->forward(x, split);
  x = mid_attention_->forward(x, split);
  x = mid_resnets_[1]->as<VaeResnetBlockImpl>()->forward(x, split);
  size_t resnet = 0;
  for (size_t level = 0; level < resnets_per_level_.size(); ++level) {
    for (int i = 0; i < resnets_per_level_[level]; ++i)
      x = up_resnets_[resnet++]->as<VaeResnetBlockImpl>()->forward(x, split);
    if (level < upsamplers_->size()) {
      x = torch::upsample_nearest2d(x, std::vector<int64_t>{x.size(2) * 2, x.size(3) * 2});
      x = split.Conv(torch::nn::Conv2d(upsamplers_->ptr<torch::nn::Conv2dImpl>(level)), x);
    }
  }
  return split.Conv(conv_out_, torch::silu(split.Norm(conv_norm_out_, x)));
}

WeightRules VaeWeightRules(const ModelConfig& c) {
  WeightRules r;
  r["post_quant_conv"] = {"post_quant_conv"};
  r["conv_in"] = {"decoder.conv_in"};
  for (int j = 0; j < 2; ++j) r[At("mid_resnets", j)] = {At("decoder.mid_block.resnets", j)};
  const std::string attention = "decoder.mid_block.attentions.0.";
  for (const char* part : {"group_norm", "to_q", "to_k", "to_v"})
    r[std::string("mid_attention.") + part] = {attention + part};
  r["mid_attention.to_out"] = {attention + "to_out.0"};
  const int levels = static_cast<int>(c.vae_channels.size()), per_level = c.vae_layers + 1;
  for (int level = 0; level < levels; ++level) {
    const std::string block = At("decoder.up_blocks", level);
    for (int j = 0; j < per_level; ++j)
      r[At("up_resnets", level * per_level + j)] = {At(block + ".resnets", j)};
    if (level + 1 < levels) r[At("upsamplers", level)] = {block + ".upsamplers.0.conv"};
  }
  r["conv_norm_out"] = {"decoder.conv_norm_out"};
  r["conv_out"] = {"decoder.conv_out"};
  return r;
}

}  // namespace ditbench
