#include "model_zoo/parallel/parallel_attention.h"

#include <cmath>
#include <stdexcept>

#include <ATen/record_function.h>

namespace ditbench {
namespace {

constexpr int kRingTag = 7;
constexpr int kP2pTag = 11;

double Bytes(const torch::Tensor& t) { return static_cast<double>(t.numel() * t.element_size()); }

void Count(const RankSubgroup& group, double bytes) {
  if (group.counter) group.counter->Add(bytes);
}

// All-to-all over dim 0 of a tensor whose dim 0 has group.size chunks: chunk j goes to rank j;
// the output's chunk j came from rank j.
torch::Tensor AllToAll(torch::Tensor input, const RankSubgroup& group) {
  input = input.contiguous();
  auto output = torch::empty_like(input);
  std::vector<int64_t> even;  // empty split sizes: equal chunks
  Count(group, Bytes(input) * (group.size - 1) / group.size);
  {
    RECORD_USER_SCOPE("ditbench.collective all_to_all");
    group.backend->alltoall_base(output, input, even, even)->wait();
  }
  return output;
}

torch::Tensor HeadSlice(const torch::Tensor& x, const RankSubgroup& ulysses) {
  const int64_t per_rank = x.size(2) / ulysses.size;
  return x.narrow(2, ulysses.rank * per_rank, per_rank);
}

// Writes fresh k/v into the cache slice [offset, offset + n) (allocating the cache at the first
// call) and returns the whole cached K and V.
std::pair<torch::Tensor, torch::Tensor> ThroughCache(const torch::Tensor& k, const torch::Tensor& v,
                                                     const KvCacheSlot& slot) {
  KvCache& cache = *slot.cache;
  if (!cache.k.defined() || cache.k.size(1) != slot.total || cache.k.scalar_type() != k.scalar_type()) {
    auto shape = k.sizes().vec();
    shape[1] = slot.total;
    cache.k = torch::zeros(shape, k.options());
    cache.v = torch::zeros(shape, v.options());
  }
  auto store = [&slot](const torch::Tensor& x) {
    if (slot.groups == 1 || slot.patches == 1) return x;
    auto shape = x.sizes().vec();  // [B, groups * patches * c, h, d] -> patch-major
    const int64_t chunk = shape[1] / (slot.groups * slot.patches);
    return x.reshape({shape[0], slot.groups, slot.patches, chunk, shape[2], shape[3]})
        .transpose(1, 2)
        .reshape(shape);
  };
  cache.k.narrow(1, slot.offset, k.size(1)).copy_(store(k));
  cache.v.narrow(1, slot.offset, v.size(1)).copy_(store(v));
  return {cache.k, cache.v};
}

// Ulysses x ring. Either degree may be 1.
class SequenceParallelAttention final : public AttentionStrategy {
 public:
  SequenceParallelAttention(RankSubgroup ulysses, RankSubgroup ring)
      : ulysses_(std::move(ulysses)), ring_(std::move(ring)) {}

  const char* name() const override {
    if (ulysses_.size > 1 && ring_.size > 1) return "usp";
    if (ring_.size > 1) return "ring";
    return ulysses_.size > 1 ? "ulysses" : "local";
  }

  AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint,
                         const KvCacheSlot* slot) const override {
    const int64_t p = ulysses_.size, h = image.q.size(2);
    if (p == 1) return AttendAcrossRing(image.q, image.k, image.v, joint, slot);
    // Heads the Ulysses degree does not divide are padded with zero heads to the next multiple
    // (`pad_heads`, experiments/trial.h): a zero query and key attend uniformly over zero
    // values, so a padded head's output is zero and is dropped; the others are exact.
    const int64_t hp = (h + p - 1) / p * p;
    const auto padded = [h, hp](const torch::Tensor& x, int64_t dim) {
      if (hp == h) return x;
      std::vector<int64_t> pad(2 * (x.dim() - dim), 0);
      pad.back() = hp - h;  // constant_pad_nd lists the last dimension first
      return torch::constant_pad_nd(x, pad);
    };
    const int64_t b = image.q.size(0), n = image.q.size(1), d = image.q.size(3);
    // [B, n, 3, P, H/P, d] -> [P, B, n, 3, H/P, d]: head chunk j goes to rank j.
    auto qkv = padded(
        image.packed.defined() ? image.packed : torch::stack({image.q, image.k, image.v}, 2), 3);
    auto send = qkv.view({b, n, 3, p, hp / p, d}).permute({3, 0, 1, 2, 4, 5});
    // Received chunk j holds rank j's tokens for our heads; rank order is token order.
    auto full =
        AllToAll(send, ulysses_).permute({1, 0, 2, 3, 4, 5}).reshape({b, p * n, 3, hp / p, d});
    auto parts = full.unbind(2);
    std::optional<Qkv> local_joint;
    if (joint) {  // replicated text tokens: keep our heads, no communication needed
      local_joint = Qkv{HeadSlice(padded(joint->q, 2), ulysses_),
                        HeadSlice(padded(joint->k, 2), ulysses_),
                        HeadSlice(padded(joint->v, 2), ulysses_),
                        {}};
    }
    AttentionOutput out = AttendAcrossRing(parts[0], parts[1], parts[2], local_joint, slot);
    // [B, P, n, H/P, d] -> [P, B, n, H/P, d]: token chunk j goes back to rank j.
    auto back = out.image.reshape({b, p, n, hp / p, d}).permute({1, 0, 2, 3, 4});
    // Received chunk j holds our tokens for rank j's heads; rank order is head order.
    out.image = AllToAll(back, ulysses_).permute({1, 2, 0, 3, 4}).reshape({b, n, hp, d});
    if (hp != h) out.image = out.image.narrow(2, 0, h);
    if (joint) {  // every rank: all heads of the text
      out.text = AllGather(out.text, 2, ulysses_);
      if (hp != h) out.text = out.text.narrow(2, 0, h);
    }
    return out;
  }

 private:
  // Attention of [text; q] over the whole ring's keys, this rank holding one image chunk.
  AttentionOutput AttendAcrossRing(const torch::Tensor& q, torch::Tensor k, torch::Tensor v,
                                   const std::optional<Qkv>& joint, const KvCacheSlot* slot) const {
    if (slot) std::tie(k, v) = ThroughCache(k, v, *slot);
    const int64_t t = joint ? joint->q.size(1) : 0;
    auto queries = joint ? torch::cat({joint->q, q}, 1) : q;
    auto first_k = joint ? torch::cat({joint->k, k}, 1) : k;
    auto first_v = joint ? torch::cat({joint->v, v}, 1) : v;
    torch::Tensor out;
    if (ring_.size == 1) {
      out = Attention(queries, first_k, first_v);
    } else {
      out = RingAttention(queries, first_k, first_v, torch::stack({k, v}, 0)).to(q.scalar_type());
    }
    if (!joint) return {out, {}};
    return {out.narrow(1, t, out.size(1) - t), out.narrow(1, 0, t)};
  }

  // Step 0 attends to this rank's keys (with the text's); steps 1..P-1 to the image K/V blocks
  // of the other ranks as they arrive. The transfer of the next block is posted before the
  // current block is computed.
  torch::Tensor RingAttention(const torch::Tensor& q, const torch::Tensor& first_k,
                              const torch::Tensor& first_v, torch::Tensor kv) const {
    const int p = ring_.size, r = ring_.rank;
    const int next = (r + 1) % p, prev = (r + p - 1) % p;
    PartialAttention acc;
    kv = kv.contiguous();
    for (int step = 0; step < p; ++step) {
      torch::Tensor incoming;
      c10::intrusive_ptr<c10d::Work> sent, received;
      if (step + 1 < p) {
        incoming = torch::empty_like(kv);
        std::vector<torch::Tensor> out_tensors{kv}, in_tensors{incoming};
        // Even ranks send first, odd ranks receive first: no two neighbours wait on each other
        // even where both directions share one stream (NCCL with two ranks).
        if (r % 2 == 0) {
          sent = ring_.backend->send(out_tensors, next, kRingTag);
          received = ring_.backend->recv(in_tensors, prev, kRingTag);
        } else {
          received = ring_.backend->recv(in_tensors, prev, kRingTag);
          sent = ring_.backend->send(out_tensors, next, kRingTag);
        }
        Count(ring_, Bytes(kv));
      }
      if (step == 0) MergePartial(acc, AttentionWithLse(q, first_k, first_v));
      else MergePartial(acc, AttentionWithLse(q, kv[0], kv[1]));
      if (step + 1 < p) {
        // The transfer ran beside the block above: only the wait is exposed communication.
        RECORD_USER_SCOPE("ditbench.collective ring_wait");
        sent->wait();
        received->wait();
        kv = incoming;
      }
    }
    return acc.out;
  }

  RankSubgroup ulysses_, ring_;
};

}  // namespace

Qkv Qkv::FromPacked(const torch::Tensor& packed) {
  auto parts = packed.unbind(2);
  return {parts[0], parts[1], parts[2], packed};
}

namespace {

AttentionKernel g_attention_kernel = AttentionKernel::kAuto;
thread_local AttentionKernelRecorder* t_recorder = nullptr;

const char* KernelName(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash:
      return "flash";
    case AttentionKernel::kEfficient:
      return "efficient";
    case AttentionKernel::kCudnn:
      return "cudnn";
    case AttentionKernel::kMath:
      return "math";
    case AttentionKernel::kAuto:
      break;
  }
  return "auto";
}

// SDPA's dispatcher's choice for these inputs (at::SDPBackend's values).
const char* SdpChoiceName(int64_t choice) {
  switch (choice) {
    case 0:
      return "math";
    case 1:
      return "flash";
    case 2:
      return "efficient";
    case 3:
      return "cudnn";
    case 4:
      return "overrideable";
  }
  return "unknown";
}

void Ran(const char* name) {
  if (t_recorder) t_recorder->Add(name);
}

// The math path with its log-sum-exp, in fp32: scores, their log-sum-exp per query, and the
// softmax-weighted values. [B, H, N, d] in; out [B, H, N, d] and lse [B, H, N].
std::pair<torch::Tensor, torch::Tensor> MathWithLse(const torch::Tensor& qt,
                                                    const torch::Tensor& kt,
                                                    const torch::Tensor& vt) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(qt.size(-1)));
  auto scores =
      torch::matmul(qt.to(torch::kFloat32), kt.to(torch::kFloat32).transpose(-2, -1)) * scale;
  auto lse = scores.logsumexp(-1);
  auto out = torch::matmul((scores - lse.unsqueeze(-1)).exp(), vt.to(torch::kFloat32));
  return {out.to(qt.scalar_type()), lse};
}

// The forced kernel's output and log-sum-exp ([B, H, N, d] in and out).
std::pair<torch::Tensor, torch::Tensor> ForcedWithLse(AttentionKernel kernel,
                                                      const torch::Tensor& qt,
                                                      const torch::Tensor& kt,
                                                      const torch::Tensor& vt) {
  switch (kernel) {
    case AttentionKernel::kMath:
      return MathWithLse(qt, kt, vt);
    case AttentionKernel::kFlash:
      if (qt.device().is_cpu()) {
        auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(qt, kt, vt);
        return {out, lse};
      } else {
        auto result = at::_scaled_dot_product_flash_attention(qt, kt, vt);
        return {std::get<0>(result), std::get<1>(result)};
      }
    case AttentionKernel::kEfficient: {
      auto result = at::_scaled_dot_product_efficient_attention(qt, kt, vt, std::nullopt, true);
      return {std::get<0>(result), std::get<1>(result).narrow(2, 0, qt.size(2))};
    }
    case AttentionKernel::kCudnn: {
      auto result = at::_scaled_dot_product_cudnn_attention(qt, kt, vt, std::nullopt, /*lse=*/true);
      return {std::get<0>(result),
              std::get<1>(result).reshape({qt.size(0), qt.size(1), qt.size(2)})};
    }
    case AttentionKernel::kAuto:
      break;
  }
  throw std::logic_error("ForcedWithLse: kAuto has no single kernel");
}

}  // namespace

ScopedAttentionKernel::ScopedAttentionKernel(AttentionKernel kernel)
    : previous_(g_attention_kernel) {
  g_attention_kernel = kernel;
}
ScopedAttentionKernel::~ScopedAttentionKernel() { g_attention_kernel = previous_; }
AttentionKernel CurrentAttentionKernel() { return g_attention_kernel; }

AttentionKernelRecorder::AttentionKernelRecorder() : previous_(t_recorder) { t_recorder = this; }
AttentionKernelRecorder::~AttentionKernelRecorder() { t_recorder = previous_; }

torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  // SDPA wants [B, H, N, d].
  auto qt = q.transpose(1, 2), kt = k.transpose(1, 2), vt = v.transpose(1, 2);
  const AttentionKernel kernel = g_attention_kernel;
  torch::Tensor out;
  if (kernel == AttentionKernel::kAuto) {
    // Asked only while a recorder listens: the dispatcher's choice costs host time.
    if (t_recorder) Ran(SdpChoiceName(at::_fused_sdp_choice(qt, kt, vt)));
    out = at::scaled_dot_product_attention(qt, kt, vt);
  } else if (kernel == AttentionKernel::kMath) {
    Ran(KernelName(kernel));
    out = std::get<0>(at::_scaled_dot_product_attention_math(qt, kt, vt));
  } else {
    Ran(KernelName(kernel));
    out = ForcedWithLse(kernel, qt, kt, vt).first;
  }
  return out.transpose(1, 2);
}

PartialAttention AttentionWithLse(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v) {
  auto qt = q.transpose(1, 2), kt = k.transpose(1, 2), vt = v.transpose(1, 2);  // [B, H, N, d]
  torch::Tensor out, lse;
  if (g_attention_kernel != AttentionKernel::kAuto) {
    Ran(KernelName(g_attention_kernel));
    std::tie(out, lse) = ForcedWithLse(g_attention_kernel, qt, kt, vt);
  } else if (q.device().is_cpu()) {
    Ran("flash");
    std::tie(out, lse) = at::_scaled_dot_product_flash_attention_for_cpu(qt, kt, vt);
  } else if (q.scalar_type() == torch::kHalf || q.scalar_type() == torch::kBFloat16) {
    // cuDNN's fused attention, which SDPA picks for the local path on recent GPUs, so that a
    // ring's speed-up is measured against the same kernel; FlashAttention-2 where cuDNN
    // refuses the shapes or is missing.
    try {
      auto result =
          at::_scaled_dot_product_cudnn_attention(qt, kt, vt, std::nullopt, /*lse=*/true);
      out = std::get<0>(result);
      lse = std::get<1>(result).reshape({qt.size(0), qt.size(1), qt.size(2)});
      Ran("cudnn");
    } catch (const c10::Error&) {
      Ran("flash");
      auto result = at::_scaled_dot_product_flash_attention(qt, kt, vt);
      out = std::get<0>(result);
      lse = std::get<1>(result);
    }
  } else {
    Ran("efficient");
    auto result = at::_scaled_dot_product_efficient_attention(qt, kt, vt, std::nullopt, true);
    out = std::get<0>(result);
    lse = std::get<1>(result).narrow(2, 0, q.size(1));  // padded to a multiple of 32
  }
  return {out.transpose(1, 2).to(torch::kFloat32), lse.to(torch::kFloat32)};
}

void MergePartial(PartialAttention& into, const PartialAttention& part) {
  if (!into.out.defined()) {
    into = part;
    return;
  }
  auto lse = torch::logaddexp(into.lse, part.lse);                     // [B, H, N]
  auto w_into = torch::exp(into.lse - lse).transpose(1, 2).unsqueeze(-1);  // [B, N, H, 1]
  auto w_part = torch::exp(part.lse - lse).transpose(1, 2).unsqueeze(-1);
  into.out = into.out * w_into + part.out * w_part;
  into.lse = lse;
}

std::unique_ptr<AttentionStrategy> MakeAttentionStrategy(const RankSubgroup& ulysses,
                                                         const RankSubgroup& ring) {
  return std::make_unique<SequenceParallelAttention>(ulysses, ring);
}

torch::Tensor AllGather(const torch::Tensor& local, int64_t dim, const RankSubgroup& group) {
  if (group.size == 1) return local;
  // Into one [P, ...] buffer (no per-rank tensors to concatenate afterwards); then rank r's
  // part moves to position r along `dim`: a view for dim 0 or when every dimension before
  // `dim` has size 1 (a batch of one), else one copy.
  auto input = local.contiguous();
  auto shape = input.sizes().vec();
  shape.front() *= group.size;  // the backends' layout: rank r's part is rows r * d0 onwards
  auto gathered = torch::empty(shape, input.options());
  Count(group, Bytes(input) * (group.size - 1));
  {
    RECORD_USER_SCOPE("ditbench.collective all_gather");
    group.backend->_allgather_base(gathered, input)->wait();
  }
  if (dim == 0) return gathered;
  return gathered.unflatten(0, {group.size, input.size(0)}).movedim(0, dim).flatten(dim, dim + 1);
}

void Broadcast(torch::Tensor& tensor, int root, const RankSubgroup& group) {
  if (group.size == 1) return;
  std::vector<torch::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  if (group.rank == root) Count(group, Bytes(tensor) * (group.size - 1));
  RECORD_USER_SCOPE("ditbench.collective broadcast");
  group.backend->broadcast(tensors, options)->wait();
}

void AllReduce(torch::Tensor& tensor, c10d::ReduceOp::RedOpType op, const RankSubgroup& group) {
  if (group.size == 1) return;
  std::vector<torch::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp(op);
  // A ring all-reduce (reduce-scatter, then all-gather): each rank sends 2 (P-1)/P of it.
  Count(group, Bytes(tensor) * 2.0 * (group.size - 1) / group.size);
  RECORD_USER_SCOPE("ditbench.collective all_reduce");
  group.backend->allreduce(tensors, options)->wait();
}

void Send(const torch::Tensor& tensor, int to, const RankSubgroup& group) {
  std::vector<torch::Tensor> tensors{tensor.contiguous()};
  Count(group, Bytes(tensor));
  RECORD_USER_SCOPE("ditbench.collective send");
  group.backend->send(tensors, to, kP2pTag)->wait();
}

void Recv(torch::Tensor& tensor, int from, const RankSubgroup& group) {
  std::vector<torch::Tensor> tensors{tensor};
  RECORD_USER_SCOPE("ditbench.collective recv");
  group.backend->recv(tensors, from, kP2pTag)->wait();
}

}  // namespace ditbench
