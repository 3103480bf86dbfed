#include "model_zoo/parallel_attention.h"

namespace ditbench {
namespace {

// All-to-all over dim 0 of a contiguous tensor whose dim 0 has group.size chunks: chunk j
// goes to rank j; the output's chunk j came from rank j.
torch::Tensor AllToAll(torch::Tensor input, const RankSubgroup& group) {
  input = input.contiguous();
  auto output = torch::empty_like(input);
  std::vector<int64_t> even;  // empty split sizes: equal chunks
  group.backend->alltoall_base(output, input, even, even)->wait();
  return output;
}

}  // namespace

torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  // SDPA wants [B, H, N, d].
  auto out = at::scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                              v.transpose(1, 2));
  return out.transpose(1, 2);
}

torch::Tensor UlyssesSelfAttention(const torch::Tensor& qkv, const RankSubgroup& group) {
  const int64_t b = qkv.size(0), n = qkv.size(1), h = qkv.size(3), d = qkv.size(4);
  if (group.size == 1) {
    auto parts = qkv.unbind(2);
    return Attention(parts[0], parts[1], parts[2]);
  }
  const int64_t p = group.size;
  TORCH_CHECK(h % p == 0, "heads ", h, " not divisible by the Ulysses degree ", p);
  // [B, n, 3, P, H/P, d] -> [P, B, n, 3, H/P, d]: head chunk j goes to rank j.
  auto send = qkv.view({b, n, 3, p, h / p, d}).permute({3, 0, 1, 2, 4, 5});
  // Received chunk j holds rank j's tokens for our heads; rank order is token order.
  auto full = AllToAll(send, group).permute({1, 0, 2, 3, 4, 5}).reshape({b, p * n, 3, h / p, d});
  auto parts = full.unbind(2);
  auto out = Attention(parts[0], parts[1], parts[2]);  // [B, N, H/P, d]
  // [B, P, n, H/P, d] -> [P, B, n, H/P, d]: token chunk j goes back to rank j.
  auto back = out.reshape({b, p, n, h / p, d}).permute({1, 0, 2, 3, 4});
  // Received chunk j holds our tokens for rank j's heads; rank order is head order.
  return AllToAll(back, group).permute({1, 2, 0, 3, 4}).reshape({b, n, h, d});
}

torch::Tensor AllGather(const torch::Tensor& local, int64_t dim, const RankSubgroup& group) {
  if (group.size == 1) return local;
  std::vector<torch::Tensor> input = {local.contiguous()};
  std::vector<std::vector<torch::Tensor>> output(1);
  for (int r = 0; r < group.size; ++r) output[0].push_back(torch::empty_like(input[0]));
  group.backend->allgather(output, input)->wait();
  return torch::cat(output[0], dim);
}

}  // namespace ditbench
