#include "model_zoo/parallel_attention.h"

#include <stdexcept>

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

// Attention over [text; image] keys, split back into the two streams.
AttentionOutput AttendJointly(const Qkv& image, const std::optional<Qkv>& joint) {
  if (!joint) return {Attention(image.q, image.k, image.v), {}};
  const int64_t t = joint->q.size(1);
  auto out = Attention(torch::cat({joint->q, image.q}, 1), torch::cat({joint->k, image.k}, 1),
                       torch::cat({joint->v, image.v}, 1));
  return {out.narrow(1, t, out.size(1) - t), out.narrow(1, 0, t)};
}

class LocalAttention final : public AttentionStrategy {
 public:
  AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint) const override {
    return AttendJointly(image, joint);
  }
  const char* name() const override { return "local"; }
};

class UlyssesAttention final : public AttentionStrategy {
 public:
  explicit UlyssesAttention(RankSubgroup group) : group_(std::move(group)) {}

  AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint) const override {
    const int64_t p = group_.size, h = image.q.size(2);
    TORCH_CHECK(h % p == 0, "heads ", h, " not divisible by the Ulysses degree ", p);
    const int64_t b = image.q.size(0), n = image.q.size(1), d = image.q.size(3);
    // [B, n, 3, P, H/P, d] -> [P, B, n, 3, H/P, d]: head chunk j goes to rank j.
    auto qkv = image.packed.defined() ? image.packed : torch::stack({image.q, image.k, image.v}, 2);
    auto send = qkv.view({b, n, 3, p, h / p, d}).permute({3, 0, 1, 2, 4, 5});
    // Received chunk j holds rank j's tokens for our heads; rank order is token order.
    auto full = AllToAll(send, group_).permute({1, 0, 2, 3, 4, 5}).reshape({b, p * n, 3, h / p, d});
    auto parts = full.unbind(2);
    std::optional<Qkv> local_joint;
    if (joint) {  // replicated text tokens: keep our heads, no communication needed
      auto heads = [&](const torch::Tensor& x) { return x.narrow(2, group_.rank * (h / p), h / p); };
      local_joint = Qkv{heads(joint->q), heads(joint->k), heads(joint->v), {}};
    }
    AttentionOutput out = AttendJointly({parts[0], parts[1], parts[2], {}}, local_joint);
    // [B, P, n, H/P, d] -> [P, B, n, H/P, d]: token chunk j goes back to rank j.
    auto back = out.image.reshape({b, p, n, h / p, d}).permute({1, 0, 2, 3, 4});
    // Received chunk j holds our tokens for rank j's heads; rank order is head order.
    out.image = AllToAll(back, group_).permute({1, 2, 0, 3, 4}).reshape({b, n, h, d});
    if (joint) out.text = AllGather(out.text, 2, group_);  // every rank: all heads of the text
    return out;
  }
  const char* name() const override { return "ulysses"; }

 private:
  RankSubgroup group_;
};

}  // namespace

Qkv Qkv::FromPacked(const torch::Tensor& packed) {
  auto parts = packed.unbind(2);
  return {parts[0], parts[1], parts[2], packed};
}

torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  // SDPA wants [B, H, N, d].
  auto out = at::scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                              v.transpose(1, 2));
  return out.transpose(1, 2);
}

std::unique_ptr<AttentionStrategy> MakeAttentionStrategy(const RankSubgroup& ulysses,
                                                         const RankSubgroup& ring) {
  if (ring.size > 1)
    throw std::invalid_argument("ring attention is not implemented in this build yet");
  if (ulysses.size > 1) return std::make_unique<UlyssesAttention>(ulysses);
  return std::make_unique<LocalAttention>();
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
