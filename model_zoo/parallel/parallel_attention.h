// Attention strategies: how a sequence-parallel group attends over a sequence whose image tokens
// are split across its ranks. A model never picks one: it asks its ParallelContext to attend
// (model_zoo/parallel/parallel_context.h), and the context holds the strategy the trial's degrees imply.
//
// One class covers the 2D mesh ulysses x ring (USP); Ulysses alone and ring alone are its edges:
// - Ulysses: an all-to-all inside the ulysses group trades the token split for a head split,
//   so each rank holds its ring chunk's tokens with H/U heads; a second all-to-all trades back.
// - Ring: K/V blocks travel around the ring group (point-to-point, the next transfer posted
//   before the current block is computed, so they overlap); the partial attentions are merged
//   exactly through their log-sum-exp.
// All are exact: the output equals one-rank attention up to floating-point order.
//
// Joint attention (MM-DiT, Flux): text tokens, replicated on every rank of the group, are
// attended together with the image tokens. Ulysses splits their heads like the image's; ring
// adds the text K/V once and passes only image K/V. Each strategy returns the text output whole.
//
// A KV cache (PipeFusion): when given, the current tokens are a patch at `offset` of a longer
// sequence; their fresh K/V replace that slice of the cache and the patch attends over the whole
// cache (the other patches' K/V may be stale: that is PipeFusion's approximation).
//
// Communication is counted where it happens: bytes this rank sends (CommCounter).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include <set>
#include <string>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace ditbench {

// Bytes a rank sent through its collectives and point-to-point transfers: an all-to-all counts
// (P-1)/P of its input, an all-gather P-1 times its part, a send its tensor, a broadcast root
// (P-1) times its tensor, an all-reduce 2 (P-1)/P of its tensor (a ring all-reduce). Shared by
// every subgroup of one rank.
struct CommCounter {
  std::atomic<std::int64_t> bytes_sent{0};
  void Add(double bytes) { bytes_sent += static_cast<std::int64_t>(bytes); }
};

// A communicator over a subset of the trial's ranks. `backend` is null when size is 1.
struct RankSubgroup {
  c10::intrusive_ptr<c10d::Backend> backend;
  int rank = 0;
  int size = 1;
  std::shared_ptr<CommCounter> counter;  // may be null (not counted)
};

// Queries, keys and values, each [B, tokens, H, d]. `packed`, when defined, is the same data
// as one [B, tokens, 3, H, d] tensor (a fused projection), which saves Ulysses a copy.
struct Qkv {
  torch::Tensor q, k, v;
  torch::Tensor packed;
  // Views of one fused projection [B, tokens, 3, H, d].
  static Qkv FromPacked(const torch::Tensor& packed);
};

// The output of one attention call: this rank's image tokens [B, n, H, d] and, for joint
// attention, all text tokens [B, T, H, d] (identical on every rank of the group).
struct AttentionOutput {
  torch::Tensor image;
  torch::Tensor text;
};

// Full-sequence K and V of one attention call, [B, N, h, d] in the layout the strategy attends
// in (after Ulysses' head split: h = H / ulysses, N the ring chunk's tokens).
struct KvCache {
  torch::Tensor k, v;
};
// A block's KV caches, one per attention call it makes: one, or two in SD3.5-medium's
// dual-attention blocks (the joint attention, then the image-only one).
constexpr int kMaxBlockAttentions = 2;
using BlockKvCaches = std::array<KvCache, kMaxBlockAttentions>;
// Where the current tokens sit in the cached sequence (token offset, in the attended layout).
struct KvCacheSlot {
  KvCache* cache = nullptr;
  std::int64_t offset = 0;
  std::int64_t total = 0;  // tokens of the whole cached sequence
  // When the current tokens are the whole sequence laid out as `groups` groups of `patches`
  // equal chunks (a synchronous PipeFusion step under USP), they are cached chunk-major
  // (patch after patch), the layout the patch steps write their slices into.
  std::int64_t groups = 1, patches = 1;
};

class AttentionStrategy {
 public:
  virtual ~AttentionStrategy() = default;
  // Self-attention of this rank's image tokens over the whole sequence, with `joint` text
  // tokens (replicated on every rank) attended jointly when given; through `slot`'s cache when
  // given.
  virtual AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint,
                                 const KvCacheSlot* slot) const = 0;
  virtual const char* name() const = 0;
};

// The attention kernel Attention and AttentionWithLse run (a trial's `attention:` axis,
// experiments/trial.h): kAuto as ditbench always picked (SDPA's choice for local attention;
// for partial attentions the CPU flash kernel, on a GPU cuDNN then FlashAttention-2 in half
// precision, memory-efficient attention in fp32); the others force ATen's kernel of that name
// on every call, and a kernel that cannot run the call throws (the trial fails with ATen's
// reason; it is never replaced by another kernel).
enum class AttentionKernel { kAuto, kFlash, kEfficient, kCudnn, kMath };

// The kernel of this process's attention calls while alive (a trial sets it once, around its
// whole run); the previous one again afterwards. Not thread-safe: one trial per process.
class ScopedAttentionKernel {
 public:
  explicit ScopedAttentionKernel(AttentionKernel kernel);
  ~ScopedAttentionKernel();
  ScopedAttentionKernel(const ScopedAttentionKernel&) = delete;
  ScopedAttentionKernel& operator=(const ScopedAttentionKernel&) = delete;

 private:
  AttentionKernel previous_;
};
AttentionKernel CurrentAttentionKernel();

// The attention kernels this thread's Attention and AttentionWithLse calls ran while alive,
// by name ("math", "flash", "efficient", "cudnn"; "overrideable" for a backend registered
// outside ATen): a forced kernel by its name, `auto` as SDPA's dispatcher chose it for the
// call (at::_fused_sdp_choice) or as the partial attention's own choice fell. With none alive,
// the calls ask nothing (a trial listens in its first, untimed, iteration only).
class AttentionKernelRecorder {
 public:
  AttentionKernelRecorder();
  ~AttentionKernelRecorder();
  AttentionKernelRecorder(const AttentionKernelRecorder&) = delete;
  AttentionKernelRecorder& operator=(const AttentionKernelRecorder&) = delete;
  const std::set<std::string>& ran() const { return ran_; }
  void Add(const std::string& kernel) { ran_.insert(kernel); }

 private:
  std::set<std::string> ran_;
  AttentionKernelRecorder* previous_;
};

// Attention of [B, N, H, d] queries over [B, M, H, d] keys and values; returns [B, N, H, d].
torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Attention with its log-sum-exp per query and head ([B, H, N], fp32), for exact merging.
struct PartialAttention {
  torch::Tensor out;  // [B, N, H, d], fp32
  torch::Tensor lse;  // [B, H, N], fp32
};
PartialAttention AttentionWithLse(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v);
// `into` becomes the attention over the union of both key sets. `into` may be empty.
void MergePartial(PartialAttention& into, const PartialAttention& part);

// The strategy for the sequence group made of `ulysses` and `ring` (sizes 1 when unused).
std::unique_ptr<AttentionStrategy> MakeAttentionStrategy(const RankSubgroup& ulysses,
                                                         const RankSubgroup& ring);

// Concatenates every rank's `local` along `dim`, in rank order (an all-gather).
torch::Tensor AllGather(const torch::Tensor& local, int64_t dim, const RankSubgroup& group);
// Every rank of `group` receives root's `tensor` (in place).
void Broadcast(torch::Tensor& tensor, int root, const RankSubgroup& group);
// Every rank of `group` receives the element-wise sum (or maximum) of every rank's `tensor`,
// in place: identical on every rank.
void AllReduce(torch::Tensor& tensor, c10d::ReduceOp::RedOpType op, const RankSubgroup& group);
// Point-to-point inside `group`; Send/Recv return when the transfer is complete.
void Send(const torch::Tensor& tensor, int to, const RankSubgroup& group);
void Recv(torch::Tensor& tensor, int from, const RankSubgroup& group);

}  // namespace ditbench
