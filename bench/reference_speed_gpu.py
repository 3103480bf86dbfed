"""bench/reference_speed.py --device cuda: whole denoising loops, diffusers against ditbench.

For each model of --models, the sweep file bench/gpu-<model>.yaml says what ditbench runs
(model, resolution, precision, steps, warm-up, timed iterations; trials eager and cuda_graph);
each round, a child process builds diffusers' model of the same configuration on the GPU
(seeded random weights in the sweep's precision), its scheduler and the inputs of the real
shapes, and times its loop with CUDA events (the same warm-up and timed iterations); then
`ditbench run` of the sweep file in a new campaign. Each side has the GPU to itself. `vae` compares one decode of a 1024 px
latent: diffusers' AutoencoderKL.decode against the `decode` stage of bench/gpu-vae.yaml.

Each model's JSON line: diffusers' median over all its timed iterations, ditbench's latency_ms
per graph mode (the median over rounds of each campaign's latency_ms), their ratios, the
per-round ratios (each round's two measurements ran back to back), and ditbench's energy per
image (NVML, `joules_per_image`) per graph mode.
"""
import json
import re
import statistics
import subprocess
import sys

import torch


def sweep_settings(path):
    """The `defaults:` scalars of a bench/gpu-*.yaml file (no YAML parser on the GPU host)."""
    settings, in_defaults = {}, False
    for line in open(path):
        if not line.startswith(" "):
            in_defaults = line.startswith("defaults:")
        match = re.match(r"^  (\w+):\s*([^#\s]+)", line)
        if in_defaults and match:
            settings[match.group(1)] = match.group(2)
    settings["name"] = re.search(r"^name:\s*(\S+)", open(path).read(), re.M).group(1)
    return settings


def timed_ms(fn):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def flux_ids(grid):
    ids = torch.zeros(grid, grid, 3)
    ids[..., 1] = torch.arange(grid)[:, None]
    ids[..., 2] = torch.arange(grid)[None, :]
    return ids.reshape(-1, 3)


class Family:
    """One family's diffusers model, scheduler, inputs and guided prediction."""

    def __init__(self, name, resolution, dtype, device):
        import diffusers
        self.name, self.dtype, self.device = name, dtype, device
        latent = resolution // 8
        g = torch.Generator().manual_seed(0)
        r = lambda *shape: torch.randn(*shape, generator=g).to(device, dtype)
        torch.manual_seed(0)
        # Built on the GPU in the timed precision: Flux.1-dev's 12B parameters never exist in
        # fp32 on the host.
        previous = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        with torch.device(device):
            if name == "pixart-alpha":
                self.model = diffusers.PixArtTransformer2DModel(
                    num_attention_heads=16, attention_head_dim=72, in_channels=4,
                    out_channels=8, num_layers=28, cross_attention_dim=1152,
                    attention_bias=True, sample_size=latent, patch_size=2,
                    activation_fn="gelu-approximate", num_embeds_ada_norm=1000,
                    norm_type="ada_norm_single", norm_elementwise_affine=False, norm_eps=1e-6,
                    caption_channels=4096, use_additional_conditions=True,
                    interpolation_scale=2)
                self.scheduler = diffusers.DPMSolverMultistepScheduler(
                    num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02,
                    beta_schedule="linear", solver_order=2, prediction_type="epsilon",
                    algorithm_type="dpmsolver++", lower_order_final=True,
                    timestep_spacing="linspace", final_sigmas_type="zero")
                self.latent = r(1, 4, latent, latent)
                # The micro-conditions, as PixArt-alpha's pipeline passes them: height and
                # width, and the aspect ratio, per row of the CFG batch.
                self.inputs = {"encoder_hidden_states": r(2, 120, 4096),
                               "added_cond_kwargs": {
                                   "resolution": torch.full((2, 2), float(resolution),
                                                            device=device, dtype=dtype),
                                   "aspect_ratio": torch.ones(2, 1, device=device,
                                                              dtype=dtype)}}
                self.guidance = 4.5
            elif name == "sd3-medium":
                self.model = diffusers.SD3Transformer2DModel(
                    sample_size=latent, patch_size=2, in_channels=16, num_layers=24,
                    attention_head_dim=64, num_attention_heads=24, joint_attention_dim=4096,
                    caption_projection_dim=1536, pooled_projection_dim=2048, out_channels=16,
                    pos_embed_max_size=192)
                self.scheduler = diffusers.FlowMatchEulerDiscreteScheduler(
                    num_train_timesteps=1000, shift=3.0)
                self.latent = r(1, 16, latent, latent)
                self.inputs = {"encoder_hidden_states": r(2, 333, 4096),
                               "pooled_projections": r(2, 2048)}
                self.guidance = 7.0
            elif name == "flux-dev":
                self.model = diffusers.FluxTransformer2DModel(
                    patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
                    attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
                    pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))
                self.scheduler = diffusers.FlowMatchEulerDiscreteScheduler(
                    num_train_timesteps=1000, shift=3.0, use_dynamic_shifting=True,
                    base_shift=0.5, max_shift=1.15, base_image_seq_len=256,
                    max_image_seq_len=4096)
                packed = latent // 2  # 2 x 2 patches packed into 64 channels
                self.latent = r(1, packed * packed, 64)
                self.inputs = {"encoder_hidden_states": r(1, 512, 4096),
                               "pooled_projections": r(1, 768),
                               "guidance": torch.full((1,), 3.5, device=device),
                               "img_ids": flux_ids(packed).to(device),
                               "txt_ids": torch.zeros(512, 3, device=device)}
                # Flux's pipeline: mu from the image tokens, 256 -> 0.5 up to 4096 -> 1.15.
                tokens = packed * packed
                slope = (1.15 - 0.5) / (4096 - 256)
                self.mu = 0.5 + slope * (tokens - 256)
                self.guidance = None
            else:
                raise SystemExit(f"reference_speed: no diffusers model for '{name}'")
        torch.set_default_dtype(previous)
        self.model = self.model.to(device, dtype).eval()

    def reset(self, steps):
        """The scheduler at step 0 (outside the timed loop: diffusers' pipelines do it once)."""
        if self.name == "flux-dev":
            self.scheduler.set_timesteps(
                sigmas=[1.0 - i * (1.0 - 1.0 / steps) / max(steps - 1, 1) for i in range(steps)],
                mu=self.mu, device=self.device)
        else:
            self.scheduler.set_timesteps(steps, device=self.device)

    def predict(self, x, t):
        if self.name == "flux-dev":  # distilled guidance: one row, timestep in [0, 1]
            return self.model(hidden_states=x, timestep=(t / 1000).expand(1).to(self.dtype),
                              return_dict=False, **self.inputs)[0]
        out = self.model(torch.cat([x, x]), timestep=t.expand(2), return_dict=False,
                         **self.inputs)[0]
        if self.name == "pixart-alpha":
            out = out[:, :4]  # the learned variance is not used by the sampler
        uncond, cond = out.chunk(2)
        return uncond + self.guidance * (cond - uncond)

    def denoise(self):
        x = self.latent
        for t in self.scheduler.timesteps:
            x = self.scheduler.step(self.predict(x, t), t, x, return_dict=False)[0]
        return x


class Vae:
    """diffusers' AutoencoderKL with PixArt-alpha's (SD's) VAE configuration: one decode."""

    def __init__(self, resolution, dtype, device):
        import diffusers
        torch.manual_seed(0)
        self.model = diffusers.AutoencoderKL(
            in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
            up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(128, 256, 512, 512),
            layers_per_block=2, latent_channels=4, norm_num_groups=32,
            sample_size=resolution, scaling_factor=0.18215).to(device, dtype).eval()
        g = torch.Generator().manual_seed(0)
        self.latent = torch.randn(1, 4, resolution // 8, resolution // 8,
                                  generator=g).to(device, dtype)

    def reset(self, steps):
        pass

    def denoise(self):  # what is timed: the decode alone
        return self.model.decode(self.latent / 0.18215, return_dict=False)[0]


def query(args, *extra):
    """`ditbench query --format json`'s rows; none when it fails (no database yet)."""
    done = subprocess.run([args.ditbench, "query", "--db", args.db, "--format", "json", *extra],
                          capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else []


def ditbench_round(args, sweep_path, sweep_name, log):
    """One new campaign of the sweep; its rows by graph mode (and the decode stage's samples)."""
    with open(log, "a") as out:
        subprocess.run([args.ditbench, "run", sweep_path, "--db", args.db, "--gpus", args.gpus,
                        "--new"], stdout=out, stderr=subprocess.STDOUT, check=False)
    rows = query(args, "--sweep", sweep_name, "--columns",
                 "campaign,trial_key,graph,status,latency_ms,energy_j,joules_per_image,"
                 "energy_note,error")
    if not rows:
        return [], []
    campaign = max(row["campaign"] for row in rows)
    rows = [row for row in rows if row["campaign"] == campaign]
    decode = [row["ms"] for row in query(args, "--sql", (
        "SELECT s.ms AS ms FROM samples s JOIN trials t ON t.id = s.trial_id "
        f"WHERE t.campaign_id = {int(campaign)} AND s.stage = 'decode' AND s.warmup = 0 "
        "AND s.rank = 0"))]
    return rows, decode


def diffusers_round(name, sweep_path):
    """The child process of one round: builds diffusers' model and times its loop (or decode).

    In a process of its own, so that each side has the GPU to itself: a parent holding the
    model between rounds would take memory from ditbench's trials and make `run` record them
    as measured on a busy GPU. Prints one JSON object: the timed iterations' ms and versions.
    """
    import diffusers
    s = sweep_settings(sweep_path)
    device = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[
        s["precision"]]
    resolution, steps = int(s["resolution"]), int(s["steps"])
    warmup, iterations = int(s["warmup"]), int(s["repeats"])
    ref = (Vae(resolution, dtype, device) if name == "vae"
           else Family(name, resolution, dtype, device))

    def loop():
        ref.reset(steps)
        return timed_ms(ref.denoise)

    with torch.inference_mode():
        for _ in range(warmup):
            loop()
        times = [loop() for _ in range(iterations)]
    print(json.dumps({"ms": times, "device": torch.cuda.get_device_name(device),
                      "torch": torch.__version__, "diffusers": diffusers.__version__}))
    return 0


def run(args):
    """The parent: alternates diffusers' child process and `ditbench run`, round by round."""
    if not args.ditbench or not args.db:
        raise SystemExit("reference_speed: --device cuda needs --ditbench and --db")
    for name in args.models.split(","):
        sweep_path = f"{args.sweeps}/gpu-{name}.yaml"
        s = sweep_settings(sweep_path)
        is_vae = name == "vae"
        theirs, ours, ratios, energy, notes, errors, facts = [], {}, {}, {}, set(), [], {}
        for _ in range(args.rounds):  # interleaved: diffusers, ditbench, diffusers, ...
            child = subprocess.run([sys.executable, __file__, "child", name, sweep_path],
                                   capture_output=True, text=True)
            if child.returncode != 0:
                errors.append(f"diffusers: exit {child.returncode}: "
                              f"{child.stderr.strip().splitlines()[-1:]}")
                continue
            facts = json.loads(child.stdout.strip().splitlines()[-1])
            t = facts.pop("ms")
            theirs += t
            rows, decode = ditbench_round(args, sweep_path, s["name"], f"{args.db}.{name}.log")
            if not rows:
                errors.append(f"ditbench: no trial recorded (see {args.db}.{name}.log)")
                continue
            if is_vae:
                measured = {"decode": statistics.median(decode)} if decode else {}
            else:
                measured = {row["graph"]: row["latency_ms"] for row in rows
                            if row["status"] == "ok" and row["latency_ms"] is not None}
            for row in rows:
                if row["status"] != "ok":
                    errors.append(f"{row['graph']}: {row['status']}: {row['error']}")
                if row.get("joules_per_image") is not None:
                    energy.setdefault(row["graph"], []).append(row["joules_per_image"])
                if row.get("energy_note"):
                    notes.add(row["energy_note"])
            for mode, ms in measured.items():
                ours.setdefault(mode, []).append(ms)
                ratios.setdefault(mode, []).append(ms / statistics.median(t))
        diffusers_ms = statistics.median(theirs) if theirs else None
        line = {
            "model": name, "what": "vae decode" if is_vae else "denoise",
            "resolution": int(s["resolution"]), "precision": s["precision"],
            "steps": 0 if is_vae else int(s["steps"]), "warmup": int(s["warmup"]),
            "iterations": int(s["repeats"]), "rounds": args.rounds, **facts,
            "diffusers_ms": round(diffusers_ms, 3) if diffusers_ms else None,
            "ditbench_ms": {m: round(statistics.median(v), 3) for m, v in ours.items()},
            "ratio": {m: round(statistics.median(v) / diffusers_ms, 4)
                      for m, v in ours.items() if diffusers_ms},
            "round_ratios": {m: [round(x, 4) for x in v] for m, v in ratios.items()},
            "joules_per_image": {m: round(statistics.median(v), 3) for m, v in energy.items()},
            "energy_notes": sorted(notes), "errors": errors,
        }
        print(json.dumps(line), flush=True)
        if args.jsonl:
            with open(args.jsonl, "a") as out:
                out.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":  # the child of one round: reference_speed_gpu.py child MODEL SWEEP
    if len(sys.argv) != 4 or sys.argv[1] != "child":
        raise SystemExit("usage: reference_speed_gpu.py child MODEL SWEEP_FILE "
                         "(started by bench/reference_speed.py --device cuda)")
    sys.exit(diffusers_round(sys.argv[2], sys.argv[3]))
