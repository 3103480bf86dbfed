#include "model_zoo/families/vae_tiles.h"

#include <algorithm>
#include <vector>

namespace ditbench {
torch::Tensor BlendInto(const torch::Tensor& a, torch::Tensor b, int64_t extent, int64_t dim) {
  extent = std::min({a.size(dim), b.size(dim), extent});
  if (extent == 0) return b;
  std::vector<int64_t> shape(b.dim(), 1);
  shape[dim] = extent;
  auto weight = (torch::arange(extent, b.options()) / double(extent)).view(shape);
  b = b.clone();
  b.narrow(dim, 0, extent)
      .copy_(a.narrow(dim, a.size(dim) - extent, extent) * (1 - weight) +
             b.narrow(dim, 0, extent) * weight);
  return b;
}

torch::Tensor DecodeInTiles(const torch::Tensor& z, int tile, int downsample,
                            const std::function<torch::Tensor(const torch::Tensor&)>& decode,
                            const RowSplit& split) {
  TORCH_CHECK(tile > 0 && tile % (4 * downsample) == 0, "VAE tile of ", tile,
              " pixels is not a multiple of ", 4 * downsample);
  const int64_t rows_dim = z.dim() - 2, cols_dim = z.dim() - 1;
  const int64_t latent_tile = tile / downsample;
  if (z.size(rows_dim) <= latent_tile && z.size(cols_dim) <= latent_tile) return decode(z);
  const int64_t stride = latent_tile * 3 / 4;  // latent rows between tile starts
  const int64_t blend = tile / 4;              // pixels blended with the previous tile
  const int64_t keep = tile - blend;           // pixels each tile contributes
  // Every tile this rank owns first, then the tiles shared (so the ranks decode at once).
  std::vector<std::vector<torch::Tensor>> tiles;
  int64_t piece = 0;
  for (int64_t i = 0; i < z.size(rows_dim); i += stride) {
    auto& row = tiles.emplace_back();
    for (int64_t j = 0; j < z.size(cols_dim); j += stride, ++piece)
      row.push_back(
          split.Owns(piece)
              ? decode(z.narrow(rows_dim, i, std::min(latent_tile, z.size(rows_dim) - i))
                           .narrow(cols_dim, j, std::min(latent_tile, z.size(cols_dim) - j)))
              : torch::Tensor());
  }
  piece = 0;
  for (auto& row : tiles)
    for (auto& t : row) t = split.Share(piece++, t, z);
  std::vector<torch::Tensor> rows;
  for (size_t i = 0; i < tiles.size(); ++i) {
    std::vector<torch::Tensor> row;
    for (size_t j = 0; j < tiles[i].size(); ++j) {
      torch::Tensor t = tiles[i][j];
      if (i > 0) t = BlendInto(tiles[i - 1][j], t, blend, rows_dim);
      if (j > 0) t = BlendInto(tiles[i][j - 1], t, blend, cols_dim);
      tiles[i][j] = t;  // its neighbours below and to the right blend from the blended tile
      row.push_back(t.narrow(rows_dim, 0, std::min(keep, t.size(rows_dim)))
                        .narrow(cols_dim, 0, std::min(keep, t.size(cols_dim))));
    }
    rows.push_back(torch::cat(row, cols_dim));
  }
  return torch::cat(rows, rows_dim);
}

}  // namespace ditbench
