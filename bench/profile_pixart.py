#!/usr/bin/env python3
"""Where does a PixArt-alpha forward spend its GPU time? diffusers' eager transformer against a
line-by-line Python replica of ditbench's model_zoo/families/pixart.cc forward (the same ATen ops in the
same order), one bf16 forward at 1024 px with the CFG batch, under torch.profiler after warm-up.
Prints each one's event-timed forward and its top CUDA kernels. A diagnostic, not a benchmark.

    PYTHONPATH=/tmp/site python3 bench/profile_pixart.py
"""
import torch
import torch.nn.functional as F
from torch import nn

dev, dt = torch.device("cuda"), torch.bfloat16
B, D, H, L, T, TD = 2, 1152, 16, 28, 120, 4096
grid = 64


class Block(nn.Module):  # model_zoo/families/pixart.cc PixArtBlockImpl
    def __init__(self):
        super().__init__()
        self.sst = nn.Parameter(torch.randn(6, D) / D**0.5)
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.cq, self.ckv, self.co = nn.Linear(D, D), nn.Linear(D, 2 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x, t6, text):
        b, n, d = x.shape
        hd = d // H
        m = (self.sst[None] + t6).unbind(1)
        mod = lambda y, s, c: y * (1 + c[:, None]) + s[:, None]
        h = mod(F.layer_norm(x, (d,), eps=1e-6), m[0], m[1])
        q, k, v = self.qkv(h).view(b, n, 3, H, hd).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
        out = x + m[2][:, None] * self.out(a.reshape(b, n, d))
        q = self.cq(out).view(b, n, H, hd)
        k, v = self.ckv(text).view(b, text.shape[1], 2, H, hd).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
        out = out + self.co(a.reshape(b, n, d))
        h = mod(F.layer_norm(out, (d,), eps=1e-6), m[3], m[4])
        return out + m[5][:, None] * self.fc2(F.gelu(self.fc1(h), approximate="tanh"))


def main():
    from diffusers import PixArtTransformer2DModel
    torch.manual_seed(0)
    ref = PixArtTransformer2DModel(
        num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=8,
        num_layers=28, cross_attention_dim=1152, attention_bias=True, sample_size=128,
        patch_size=2, activation_fn="gelu-approximate", num_embeds_ada_norm=1000,
        norm_type="ada_norm_single", norm_elementwise_affine=False, norm_eps=1e-6,
        caption_channels=4096, use_additional_conditions=True).to(dev, dt).eval()
    blocks = nn.ModuleList(Block() for _ in range(L)).to(dev, dt).eval()
    latent = torch.randn(B, 4, 128, 128, device=dev, dtype=dt)
    text = torch.randn(B, T, TD, device=dev, dtype=dt)
    t = torch.full((B,), 999.0, device=dev)
    # The preset's micro-conditions, as PixArtAlphaPipeline passes them (1024 px, square).
    micro = {"resolution": torch.tensor([[1024.0, 1024.0]] * B, device=dev),
             "aspect_ratio": torch.tensor([[1.0]] * B, device=dev)}
    x0 = torch.randn(B, grid * grid, D, device=dev, dtype=dt)
    t6 = torch.randn(B, 6, D, device=dev, dtype=dt)
    text_d = torch.randn(B, T, D, device=dev, dtype=dt)

    def run_ref():
        return ref(latent, encoder_hidden_states=text, timestep=t, added_cond_kwargs=micro,
                   return_dict=False)[0]

    def run_replica():
        x = x0
        for blk in blocks:
            x = blk(x, t6, text_d)
        return x

    with torch.inference_mode():
        for name, fn in [("diffusers", run_ref), ("ditbench-replica (28 blocks only)", run_replica)]:
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(10):
                s.record(); fn(); e.record(); e.synchronize(); times.append(s.elapsed_time(e))
            times.sort()
            print(f"## {name}: forward median {times[5]:.2f} ms")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                fn(); torch.cuda.synchronize()
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=90))


if __name__ == "__main__":
    main()
