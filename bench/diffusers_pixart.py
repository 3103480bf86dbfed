#!/usr/bin/env python3
"""diffusers' eager PixArt-alpha transformer, timed the way a careful engineer would.

The reference for ditbench's `pixart-alpha` denoise numbers: the same shapes (1024 px -> a
128 x 128 latent, 4096 image tokens; 120 T5 tokens of 4096; batch 1 doubled by classifier-free
guidance), random weights (seeded), the same precision, and the same denoising loop as
ditbench's worker (guidance 4.5; diffusers' DPMSolverMultistepScheduler as DPM-Solver++ 2M on the
epsilon prediction over the linear beta schedule, linspace timesteps, the last step landing on
the data prediction: what the `pixart-alpha` preset runs). Timed with CUDA events on the current stream, after untimed warm-up iterations;
prints one JSON line per measurement.

    PYTHONPATH=/tmp/site python3 bench/diffusers_pixart.py [--steps 20] [--warmup 5] [--iterations 10]
                                                           [--resolution 1024] [--precision bf16]

The model is diffusers' PixArtTransformer2DModel with PixArt-alpha XL/2's configuration,
micro-conditions included (the 1024-MS checkpoint's resolution / aspect-ratio embedding, passed
as PixArtAlphaPipeline passes them), as ditbench's preset has them.
"""
import argparse
import json
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
    from diffusers import DPMSolverMultistepScheduler, PixArtTransformer2DModel

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
        caption_channels=4096, use_additional_conditions=True,
    ).to(device, dtype).eval()
    params = sum(p.numel() for p in model.parameters())

    # Sampler: ditbench's DpmSolverMultistep (model_zoo/layers/sampler.cc) is this scheduler.
    scheduler = DPMSolverMultistepScheduler(
        num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02, beta_schedule="linear",
        solver_order=2, prediction_type="epsilon", algorithm_type="dpmsolver++",
        timestep_spacing="linspace", final_sigmas_type="zero", lower_order_final=True)

    noise = torch.randn(1, 4, latent, latent).to(device, dtype)
    text = torch.randn(2, 120, 4096).to(device, dtype)  # rows 0: negative, 1: prompt
    micro = {"resolution": torch.tensor([[float(args.resolution)] * 2] * 2, device=device),
             "aspect_ratio": torch.tensor([[1.0]] * 2, device=device)}
    guidance = 4.5

    def denoise():
        x = noise
        scheduler.set_timesteps(args.steps, device=device)
        for t in scheduler.timesteps:
            inp = torch.cat([x, x], 0)
            tt = t.expand(2).to(device)
            out = model(inp, encoder_hidden_states=text, timestep=tt, added_cond_kwargs=micro,
                        return_dict=False)[0]
            eps = out[:, :4]
            uncond, cond = eps[0:1], eps[1:2]
            eps = uncond + guidance * (cond - uncond)
            x = scheduler.step(eps, t, x, return_dict=False)[0]
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
