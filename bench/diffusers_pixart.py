#!/usr/bin/env python3
"""diffusers' eager PixArt-alpha transformer, timed the way a careful engineer would.

The reference for ditbench's `pixart-alpha` denoise numbers: the same shapes (1024 px -> a
128 x 128 latent, 4096 image tokens; 120 T5 tokens of 4096; batch 1 doubled by classifier-free
guidance), random weights (seeded), the same precision, and the same denoising loop as
ditbench's worker (guidance 4.5, first-order DPM-Solver step on the epsilon prediction, linear
beta schedule). Timed with CUDA events on the current stream, after untimed warm-up iterations;
prints one JSON line per measurement.

    PYTHONPATH=/tmp/site python3 bench/diffusers_pixart.py [--steps 20] [--warmup 5] [--iterations 10]
                                                           [--resolution 1024] [--precision bf16]

The model is diffusers' PixArtTransformer2DModel with PixArt-alpha XL/2's configuration, except
use_additional_conditions=False (the 1024-MS checkpoint adds a resolution / aspect-ratio
embedding: a few small MLPs per forward that ditbench's model does not have).
"""
import argparse
import json
import math
import statistics
import sys

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--resolution", type=int, default=1024)
    parser.add_argument("--precision", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="diffusers")
    args = parser.parse_args()

    import diffusers
    from diffusers import PixArtTransformer2DModel

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda", 0)
    torch.manual_seed(args.seed)
    latent = args.resolution // 8
    model = PixArtTransformer2DModel(
        num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=8,
        num_layers=28, cross_attention_dim=1152, attention_bias=True, sample_size=latent,
        patch_size=2, activation_fn="gelu-approximate", num_embeds_ada_norm=1000,
        norm_type="ada_norm_single", norm_elementwise_affine=False, norm_eps=1e-6,
        caption_channels=4096, use_additional_conditions=False,
    ).to(device, dtype).eval()
    params = sum(p.numel() for p in model.parameters())

    # Sampler: ditbench's DpmSolverFirstOrder (model_zoo/layers/sampler.cc).
    betas = [0.0001 + (0.02 - 0.0001) * t / 999 for t in range(1000)]
    alpha_bar, product = [], 1.0
    for beta in betas:
        product *= 1.0 - beta
        alpha_bar.append(product)
    timesteps = [round(999 * (1.0 - i / args.steps)) for i in range(args.steps)]

    noise = torch.randn(1, 4, latent, latent).to(device, dtype)
    text = torch.randn(2, 120, 4096).to(device, dtype)  # rows 0: negative, 1: prompt
    guidance = 4.5

    def denoise():
        x = noise
        for i, t in enumerate(timesteps):
            inp = torch.cat([x, x], 0)
            tt = torch.full((2,), float(t), device=device)
            out = model(inp, encoder_hidden_states=text, timestep=tt, return_dict=False)[0]
            eps = out[:, :4]
            uncond, cond = eps[0:1], eps[1:2]
            eps = uncond + guidance * (cond - uncond)
            ab = alpha_bar[t]
            ab_next = alpha_bar[timesteps[i + 1]] if i + 1 < len(timesteps) else 1.0
            x0 = (x - math.sqrt(1.0 - ab) * eps) / math.sqrt(ab)
            x = math.sqrt(ab_next) * x0 + math.sqrt(1.0 - ab_next) * eps
        return x

    def timed(fn):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    with torch.inference_mode():
        torch.cuda.reset_peak_memory_stats(device)
        warm = [timed(denoise) for _ in range(args.warmup)]
        ms = [timed(denoise) for _ in range(args.iterations)]
        peak_mb = torch.cuda.max_memory_allocated(device) / 1048576.0
        out = denoise().float()
    median = statistics.median(ms)
    result = {
        "label": args.label, "what": "denoise", "steps": args.steps,
        "resolution": args.resolution, "precision": args.precision, "batch": 1, "cfg_batch": 2,
        "median_ms": median, "mean_ms": statistics.mean(ms), "min_ms": min(ms), "max_ms": max(ms),
        "cov": statistics.stdev(ms) / statistics.mean(ms) if len(ms) > 1 else 0.0,
        "iterations": len(ms), "warmup_ms": warm, "peak_mem_mb": peak_mb,
        "parameters": params, "finite": bool(torch.isfinite(out).all().item()),
        "device": torch.cuda.get_device_name(device), "torch": torch.__version__,
        "diffusers": diffusers.__version__,
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
