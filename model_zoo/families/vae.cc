#include "model_zoo/families/vae.h"

#include <algorithm>
#include <vector>

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

torch::Tensor VaeResnetBlockImpl::forward(const torch::Tensor& x) {
  auto h = conv1_(torch::silu(norm1_(x)));
  h = conv2_(torch::silu(norm2_(h)));
  return (conv_shortcut_ ? conv_shortcut_(x) : x) + h;
}

VaeAttentionImpl::VaeAttentionImpl(int64_t c, int64_t groups) {
  group_norm_ = register_module("group_norm", Norm(c, groups));
  to_q_ = register_module("to_q", torch::nn::Linear(c, c));
  to_k_ = register_module("to_k", torch::nn::Linear(c, c));
  to_v_ = register_module("to_v", torch::nn::Linear(c, c));
  to_out_ = register_module("to_out", torch::nn::Linear(c, c));
}

torch::Tensor VaeAttentionImpl::forward(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  auto tokens = group_norm_(x).view({b, c, h * w}).transpose(1, 2);  // [B, hw, C]
  auto head = [&](const torch::nn::Linear& l) {
    return torch::linear(tokens, l->weight, l->bias).unsqueeze(2);  // one head: [B, hw, 1, C]
  };
  auto attended = Attention(head(to_q_), head(to_k_), head(to_v_)).squeeze(2);
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
  const int64_t latent_tile = tile / config_.vae_downsample;
  TORCH_CHECK(tile > 0 && tile % (4 * config_.vae_downsample) == 0, "VAE tile of ", tile,
              " pixels is not a multiple of ", 4 * config_.vae_downsample);
  if (z.size(2) <= latent_tile && z.size(3) <= latent_tile) return Decode(z);
  const int64_t stride = latent_tile * 3 / 4;  // latent rows between tile starts
  const int64_t blend = tile / 4;              // pixels blended with the previous tile
  const int64_t keep = tile - blend;           // pixels each tile contributes
  // Blends the first `extent` rows (dim 2) or columns (dim 3) of `b` from `a`'s last ones.
  auto blend_into = [](const torch::Tensor& a, torch::Tensor b, int64_t extent, int64_t dim) {
    extent = std::min({a.size(dim), b.size(dim), extent});
    if (extent == 0) return b;
    auto weight = torch::arange(extent, b.options()) / double(extent);
    weight = dim == 2 ? weight.view({1, 1, -1, 1}) : weight.view({1, 1, 1, -1});
    b = b.clone();
    b.narrow(dim, 0, extent)
        .copy_(a.narrow(dim, a.size(dim) - extent, extent) * (1 - weight) +
               b.narrow(dim, 0, extent) * weight);
    return b;
  };
  std::vector<std::vector<torch::Tensor>> tiles;
  for (int64_t i = 0; i < z.size(2); i += stride) {
    auto& row = tiles.emplace_back();
    for (int64_t j = 0; j < z.size(3); j += stride)
      row.push_back(Decode(z.narrow(2, i, std::min(latent_tile, z.size(2) - i))
                               .narrow(3, j, std::min(latent_tile, z.size(3) - j))));
  }
  std::vector<torch::Tensor> rows;
  for (size_t i = 0; i < tiles.size(); ++i) {
    std::vector<torch::Tensor> row;
    for (size_t j = 0; j < tiles[i].size(); ++j) {
      torch::Tensor t = tiles[i][j];
      if (i > 0) t = blend_into(tiles[i - 1][j], t, blend, 2);
      if (j > 0) t = blend_into(tiles[i][j - 1], t, blend, 3);
      tiles[i][j] = t;  // its neighbours below and to the right blend from the blended tile
      row.push_back(t.narrow(2, 0, std::min(keep, t.size(2))).narrow(3, 0, std::min(keep, t.size(3))));
    }
    rows.push_back(torch::cat(row, 3));
  }
  return torch::cat(rows, 2);
}

torch::Tensor VaeDecoderImpl::Decode(const torch::Tensor& z) {
  auto x = z;
  if (post_quant_conv_) x = post_quant_conv_(x);
  x = conv_in_(x);
  x = mid_resnets_[0]->as<VaeResnetBlockImpl>()->forward(x);
  x = mid_attention_(x);
  x = mid_resnets_[1]->as<VaeResnetBlockImpl>()->forward(x);
  size_t resnet = 0;
  for (size_t level = 0; level < resnets_per_level_.size(); ++level) {
    for (int i = 0; i < resnets_per_level_[level]; ++i)
      x = up_resnets_[resnet++]->as<VaeResnetBlockImpl>()->forward(x);
    if (level < upsamplers_->size()) {
      x = torch::upsample_nearest2d(x, std::vector<int64_t>{x.size(2) * 2, x.size(3) * 2});
      x = upsamplers_[level]->as<torch::nn::Conv2dImpl>()->forward(x);
    }
  }
  return conv_out_(torch::silu(conv_norm_out_(x)));
}

}  // namespace ditbench
