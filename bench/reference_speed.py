#!/usr/bin/env python3
"""One transformer forward: ditbench vs diffusers' eager forward, same weights, same machine.

For each model (the tiny presets' shapes and three published configurations as diffusers
configurations, at 256 px, batch 2 as a CFG batch would be; Flux without CFG, batch 1), writes a diffusers-format folder with seeded
random weights and the forward's inputs, then alternates rounds: diffusers' forward timed in
this process, then `ditbench-worker --forward ... --repeats N` (weights loaded from the same
folder; the worker prints its per-forward wall times). Same thread count (--threads, both
sides), same precision. Prints one JSON line per model: both medians over all samples, their
ratio, and the median (and quartiles) of the per-round ratios, each round's two runs having
been back to back (the figure to quote on a shared machine).

    PYTHONPATH=/tmp/refdeps .venv/bin/python bench/reference_speed.py --worker build/ditbench-worker
        [--precision fp32] [--threads 2] [--rounds 3] [--iterations 10]
        [--models pixart,sd3,flux,pixart-alpha,sd3-medium,flux-dev-d2s4]
        [--against OTHER/ditbench-worker]
--against times a second worker (another commit's build) in every round too, right after the
first, on the same folder: the JSON line then also has `against_median_round_ratio`, this
worker's median over the other's per round (and its quartiles), the figure that says whether a
change slowed the forward, measured in one run on one machine.

diffusers==0.35.2 (tests/reference/make_reference.py's pin).

--device cuda (bench/gpu-session, stages families and vae) compares whole denoising loops
instead, at the shapes of the sweep files bench/gpu-<model>.yaml (1024 px, bf16, full depth,
seeded random weights; steps, warm-up and timed iterations read from the file): diffusers'
eager model with diffusers' scheduler of the family (PixArt: DPM-Solver++ 2M with the
micro-conditions; SD3: flow-matching Euler, shift 3; Flux.1-dev: flow-matching Euler with the
resolution shift, distilled guidance 3.5), timed with CUDA events in this process, against
`ditbench run` of the sweep file (eager and cuda_graph trials) in a fresh campaign, round by
round. `--models vae` times one VAE decode (diffusers' AutoencoderKL.decode against the
`decode` stage of bench/gpu-vae.yaml). Prints one JSON line per model; with --jsonl also
appends it there (bench/gpu_session_tables.py turns the lines into tables).

    python3 bench/reference_speed.py --device cuda --ditbench build/ditbench --db families.db
        [--models pixart-alpha,sd3-medium,flux-dev,vae] [--rounds 2] [--jsonl out.jsonl]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch


def configs():
    import diffusers
    # Tiny presets (pixart-alpha-tiny, sd3-medium-tiny, flux-dev-tiny in model_zoo/shapes/model_config.cc)
    # and the published configurations of PixArt-alpha XL/2 1024, SD3-medium and Flux.1-dev with
    # 2 double-stream and 4 single-stream blocks, all at 256 px: a 32 x 32 latent. Text lengths
    # as the real pipelines pad them (PixArt 120, SD3 77 + 256, Flux-dev 512); tiny ones use 16.
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)

    def pixart(text, width, config):
        inputs = {"hidden_states": r(2, 4, 32, 32), "encoder_hidden_states": r(2, text, width),
                  "timestep": torch.tensor([500.0, 500.0])}
        if config.get("use_additional_conditions"):
            inputs["resolution"] = torch.tensor([[256.0, 256.0]] * 2)
            inputs["aspect_ratio"] = torch.tensor([[1.0]] * 2)
        return diffusers.PixArtTransformer2DModel, config, inputs

    def sd3(text, width, pooled, config):
        return diffusers.SD3Transformer2DModel, config, {
            "hidden_states": r(2, 16, 32, 32), "encoder_hidden_states": r(2, text, width),
            "pooled_projections": r(2, pooled), "timestep": torch.tensor([500.0, 500.0])}

    def flux(text, width, pooled, config):
        return diffusers.FluxTransformer2DModel, config, {
            "hidden_states": r(1, 256, 64), "encoder_hidden_states": r(1, text, width),
            "pooled_projections": r(1, pooled), "timestep": torch.tensor([0.5]),
            "guidance": torch.tensor([3.5]), "img_ids": flux_ids(16),
            "txt_ids": torch.zeros(text, 3)}

    return {
        "pixart": lambda: pixart(16, 64, dict(
            num_attention_heads=4, attention_head_dim=16, in_channels=4, out_channels=8,
            num_layers=2, cross_attention_dim=64, caption_channels=64, sample_size=32,
            use_additional_conditions=False)),
        "sd3": lambda: sd3(16, 64, 32, dict(
            sample_size=32, patch_size=2, in_channels=16, num_layers=2, attention_head_dim=32,
            num_attention_heads=4, joint_attention_dim=64, caption_projection_dim=128,
            pooled_projection_dim=32, out_channels=16, pos_embed_max_size=192)),
        "flux": lambda: flux(16, 64, 32, dict(
            patch_size=1, in_channels=64, num_layers=2, num_single_layers=2,
            attention_head_dim=32, num_attention_heads=4, joint_attention_dim=64,
            pooled_projection_dim=32, guidance_embeds=True, axes_dims_rope=(4, 14, 14))),
        "pixart-alpha": lambda: pixart(120, 4096, dict(
            num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=8,
            num_layers=28, cross_attention_dim=1152, caption_channels=4096, sample_size=128,
            patch_size=2, interpolation_scale=2, use_additional_conditions=True)),
        "sd3-medium": lambda: sd3(333, 4096, 2048, dict(
            sample_size=128, patch_size=2, in_channels=16, num_layers=24, attention_head_dim=64,
            num_attention_heads=24, joint_attention_dim=4096, caption_projection_dim=1536,
            pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=192)),
        "flux-dev-d2s4": lambda: flux(512, 4096, 768, dict(
            patch_size=1, in_channels=64, num_layers=2, num_single_layers=4,
            attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
            pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))),
    }


def flux_ids(grid):
    ids = torch.zeros(grid, grid, 3)
    ids[..., 1] = torch.arange(grid)[:, None]
    ids[..., 2] = torch.arange(grid)[None, :]
    return ids.reshape(-1, 3)


def diffusers_times(model, inputs, dtype, iterations):
    kwargs = {k: (v.to(dtype) if k not in ("timestep", "img_ids", "txt_ids") else v)
              for k, v in inputs.items() if k not in ("resolution", "aspect_ratio")}
    if "resolution" in inputs:  # PixArt's micro-conditions, as its pipeline passes them
        kwargs["added_cond_kwargs"] = {"resolution": inputs["resolution"],
                                       "aspect_ratio": inputs["aspect_ratio"]}
    times = []
    with torch.inference_mode():
        model(**kwargs, return_dict=False)  # warm-up
        for _ in range(iterations):
            start = time.perf_counter()
            model(**kwargs, return_dict=False)
            times.append((time.perf_counter() - start) * 1e3)
    return times


def ditbench_times(worker, folder, precision, threads, iterations):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), WORLD_SIZE="1", RANK="0",
               LOCAL_WORLD_SIZE=str(max(1, (os.cpu_count() or 1) // threads)))
    out = subprocess.run(
        [worker, "--forward", os.path.join(folder, "model"), "--inputs",
         os.path.join(folder, "inputs.safetensors"), "--output",
         os.path.join(folder, "out.safetensors"), "--precision", precision,
         "--repeats", str(iterations + 1)],
        env=env, check=True, capture_output=True, text=True).stdout
    times = json.loads(out.strip().splitlines()[-1])["forward_ms"]
    return times[1:]  # the first of the repeats is a second warm-up


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--ditbench", help="--device cuda: the ditbench CLI (runs the sweeps)")
    parser.add_argument("--sweeps", default=os.path.dirname(os.path.abspath(__file__)),
                        help="--device cuda: the folder of gpu-<model>.yaml")
    parser.add_argument("--db", help="--device cuda: the results database the runs go to")
    parser.add_argument("--gpus", default="auto", help="--device cuda: `ditbench run --gpus`")
    parser.add_argument("--jsonl", help="--device cuda: also append each JSON line here")
    parser.add_argument("--worker", help="--device cpu: ditbench-worker (--forward)")
    parser.add_argument("--against", help="--device cpu: another ditbench-worker, timed in "
                        "every round too (another commit's build)")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)  # --device cuda: gpu-session passes 2
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--models", default="pixart,sd3,flux")
    args = parser.parse_args()
    if args.device == "cuda":
        import reference_speed_gpu  # bench/reference_speed_gpu.py, beside this file
        if args.models == parser.get_default("models"):
            args.models = "pixart-alpha,sd3-medium,flux-dev,vae"
        return reference_speed_gpu.run(args)
    if not args.worker:
        parser.error("--worker is required with --device cpu")

    import diffusers
    from safetensors.torch import save_file
    torch.set_num_threads(args.threads)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[args.precision]
    all_configs = configs()
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models.split(","):
            cls, config, inputs = all_configs[name]()
            torch.manual_seed(0)
            model = cls(**config).eval()
            folder = os.path.join(scratch, name)
            # Saved in the timed precision: both sides then start from the same bits, and the
            # 2B-parameter models take half the disk and load time.
            model = model.to(dtype)
            model.save_pretrained(os.path.join(folder, "model"), safe_serialization=True)
            save_file({k: v.contiguous() for k, v in inputs.items()},
                      os.path.join(folder, "inputs.safetensors"))
            ours, theirs, ratios, against = [], [], [], []
            for _ in range(args.rounds):  # interleaved: diffusers, ditbench, diffusers, ...
                t = diffusers_times(model, inputs, dtype, args.iterations)
                o = ditbench_times(args.worker, folder, args.precision, args.threads,
                                   args.iterations)
                theirs += t
                ours += o
                # Each round's pair ran back to back: their ratio is what a burst of load
                # from other processes disturbs least.
                ratios.append(statistics.median(o) / statistics.median(t))
                if args.against:
                    a = ditbench_times(args.against, folder, args.precision, args.threads,
                                       args.iterations)
                    against.append(statistics.median(o) / statistics.median(a))
            ditbench_ms, diffusers_ms = statistics.median(ours), statistics.median(theirs)
            quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
            extra = {}
            if against:
                q = statistics.quantiles(against, n=4) if len(against) > 1 else against * 3
                extra = {"against_median_round_ratio": round(statistics.median(against), 3),
                         "against_round_ratio_iqr": [round(q[0], 3), round(q[2], 3)]}
            print(json.dumps({
                "model": name, "precision": args.precision, "threads": args.threads,
                "diffusers": diffusers.__version__, "torch": torch.__version__,
                "ditbench_median_ms": round(ditbench_ms, 3),
                "diffusers_median_ms": round(diffusers_ms, 3),
                "ratio_of_medians": round(ditbench_ms / diffusers_ms, 3),
                "median_round_ratio": round(statistics.median(ratios), 3),
                "round_ratio_iqr": [round(quartiles[0], 3), round(quartiles[2], 3)],
                "rounds": args.rounds, "samples": len(ours),
                "load_average": round(os.getloadavg()[0], 2), **extra}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
