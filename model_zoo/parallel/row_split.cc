#include "model_zoo/parallel/row_split.h"

#include <algorithm>
#include <variant>
#include <vector>

namespace ditbench {
namespace {

int64_t RowsDim(const torch::Tensor& x) { return x.dim() - 2; }

// The padding of a zero-padded convolution of stride 1 and dilation 1, per spatial dimension.
template <size_t D, typename Options>
std::vector<int64_t> ZeroPadding(const Options& options) {
  const auto* padding = std::get_if<torch::ExpandingArray<D>>(&options.padding());
  TORCH_CHECK(padding != nullptr, "a split VAE decode needs explicit convolution padding");
  TORCH_CHECK(std::holds_alternative<torch::enumtype::kZeros>(options.padding_mode()),
              "a split VAE decode pads convolutions with zeros only");
  for (size_t i = 0; i < D; ++i)
    TORCH_CHECK((*options.stride())[i] == 1 && (*options.dilation())[i] == 1,
                "a split VAE decode runs convolutions of stride 1 and dilation 1 only");
  return std::vector<int64_t>((**padding).begin(), (**padding).end());
}

}  // namespace

RowSplit RowSplit::ForRows(int64_t rows) const {
  RowSplit split = *this;
  if (!split.split()) return split;
  TORCH_CHECK(rows >= parts(), rows, " latent rows cannot split into ", parts(), " bands");
  split.bands_.assign(parts(), rows / parts());
  for (int64_t r = 0; r < rows % parts(); ++r) ++split.bands_[r];
  return split;
}

int64_t RowSplit::Scale(const torch::Tensor& band) const {
  const int64_t rows = band.size(RowsDim(band)), mine = bands_.at(part());
  TORCH_CHECK(rows % mine == 0, "a band of ", rows, " rows is not a multiple of this rank's ", mine,
              " latent rows");
  return rows / mine;
}

torch::Tensor RowSplit::Shard(const torch::Tensor& full) const {
  if (!split()) return full;
  const int64_t dim = RowsDim(full);
  TORCH_CHECK(bands_.size() == size_t(parts()), "the split was not sized to a latent (ForRows)");
  int64_t start = 0;
  for (int r = 0; r < part(); ++r) start += bands_[r];
  TORCH_CHECK(start + bands_[part()] <= full.size(dim), full.size(dim),
              " rows are not the latent the split was sized to");
  return full.narrow(dim, start, bands_[part()]);
}

torch::Tensor RowSplit::Gather(const torch::Tensor& band) const {
  if (!split()) return band;
  const int64_t dim = RowsDim(band), scale = Scale(band);
  const int64_t tallest = *std::max_element(bands_.begin(), bands_.end()) * scale;
  if (std::all_of(bands_.begin(), bands_.end(), [&](int64_t b) { return b * scale == tallest; }))
    return AllGather(band, dim, group_);
  // Unequal bands travel padded to the tallest, then lose their padding.
  auto padded = band;
  if (band.size(dim) < tallest) {
    auto shape = band.sizes().vec();
    shape[dim] = tallest - band.size(dim);
    padded = torch::cat({band, torch::zeros(shape, band.options())}, dim);
  }
  const auto all = AllGather(padded, dim, group_);
  std::vector<torch::Tensor> parts;
  for (int r = 0; r < group_.size; ++r)
    parts.push_back(all.narrow(dim, r * tallest, bands_[r] * scale));
  return torch::cat(parts, dim);
}

torch::Tensor RowSplit::WithHalo(const torch::Tensor& band, int64_t halo, Edge edge) const {
  const int64_t dim = RowsDim(band), rows = band.size(dim);
  if (halo == 0) return band;
  TORCH_CHECK(halo <= rows, "a band of ", rows, " rows cannot lend a halo of ", halo);
  auto pad = [&](int64_t edge_row) {
    return edge == Edge::kZeros
               ? torch::zeros_like(band.narrow(dim, 0, halo))
               : band.narrow(dim, edge_row, 1).expand_as(band.narrow(dim, 0, halo));
  };
  if (!split()) return torch::cat({pad(0), band, pad(rows - 1)}, dim);
  // Every band's first and last `halo` rows, in rank order: [top_0, bottom_0, top_1, ...].
  const auto edges =
      AllGather(torch::cat({band.narrow(dim, 0, halo), band.narrow(dim, rows - halo, halo)}, dim),
                dim, group_);
  const int64_t r = part();
  auto above = r == 0 ? pad(0) : edges.narrow(dim, (2 * (r - 1) + 1) * halo, halo);
  auto below = r + 1 == parts() ? pad(rows - 1) : edges.narrow(dim, 2 * (r + 1) * halo, halo);
  return torch::cat({above, band, below}, dim);
}

torch::Tensor RowSplit::Conv(torch::nn::Conv2d conv, const torch::Tensor& band) const {
  if (!split()) return conv->forward(band);
  const auto& o = conv->options;
  const auto padding = ZeroPadding<2>(o);
  const std::vector<int64_t> ones{1, 1}, pad{0, padding[1]};
  return torch::conv2d(WithHalo(band, padding[0], Edge::kZeros), conv->weight, conv->bias, ones,
                       pad, ones, o.groups());
}

torch::Tensor RowSplit::Conv(torch::nn::Conv3d conv, const torch::Tensor& band) const {
  if (!split()) return conv->forward(band);
  const auto& o = conv->options;
  const auto padding = ZeroPadding<3>(o);
  const std::vector<int64_t> ones{1, 1, 1}, pad{padding[0], 0, padding[2]};
  return torch::conv3d(WithHalo(band, padding[1], Edge::kZeros), conv->weight, conv->bias, ones,
                       pad, ones, o.groups());
}

torch::Tensor RowSplit::Norm(torch::nn::GroupNorm norm, const torch::Tensor& band) const {
  if (!split()) return norm->forward(band);
  const auto& o = norm->options;
  const int64_t batch = band.size(0), groups = o.num_groups();
  auto x = band.to(torch::kFloat32).reshape({batch, groups, -1});
  // Every band's elements per group: this band's, per row, times the rows of all of them.
  int64_t latent_rows = 0;
  for (int64_t b : bands_) latent_rows += b;
  const double count = static_cast<double>(x.size(2)) / band.size(RowsDim(band)) *
                       static_cast<double>(latent_rows * Scale(band));
  auto sum = x.sum(-1);
  AllReduce(sum, c10d::ReduceOp::SUM, group_);
  const auto centered = x - (sum / count).unsqueeze(-1);
  auto squares = centered.square().sum(-1);
  AllReduce(squares, c10d::ReduceOp::SUM, group_);
  auto y = (centered * torch::rsqrt(squares / count + o.eps()).unsqueeze(-1)).view(band.sizes());
  if (o.affine()) {
    std::vector<int64_t> shape(band.dim(), 1);
    shape[1] = band.size(1);
    y = y * norm->weight.to(torch::kFloat32).view(shape) +
        norm->bias.to(torch::kFloat32).view(shape);
  }
  return y.to(band.scalar_type());
}

torch::Tensor RowSplit::Share(int64_t piece, const torch::Tensor& mine,
                              const torch::Tensor& like) const {
  if (!split()) return mine;
  const int owner = static_cast<int>(piece % parts());
  auto shape = torch::zeros({like.dim()}, like.options().dtype(torch::kLong));
  if (owner == part()) {
    TORCH_CHECK(mine.defined() && mine.dim() == like.dim(), "piece ", piece, " was not computed");
    shape.copy_(torch::tensor(mine.sizes().vec(), torch::kLong));
  }
  Broadcast(shape, owner, group_);
  const auto sizes = shape.cpu();
  std::vector<int64_t> dims(sizes.data_ptr<int64_t>(), sizes.data_ptr<int64_t>() + sizes.numel());
  torch::Tensor out = owner == part() ? mine.contiguous() : torch::empty(dims, like.options());
  Broadcast(out, owner, group_);
  return out;
}

}  // namespace ditbench
