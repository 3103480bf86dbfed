#!/usr/bin/env python3
"""A diffusers pipeline as a ditbench `command` workload (sweeps/diffusers-pipeline.yaml).

NOT RUN IN CI: it needs a GPU, torch, diffusers and a pipeline's weights on local disk.

    python3 diffusers_pipeline.py --weights /models/PixArt-XL-2-1024-MS --resolution 1024 \
        --steps 20 --precision bf16 --scope denoise --batch 1 --seed 0

Written against diffusers' public API only: DiffusionPipeline.from_pretrained, the pipeline's
__call__ (prompt, height, width, num_inference_steps, num_images_per_prompt, generator,
output_type) and pipe.to(). `--scope denoise` asks for output_type="latent" (the VAE decode is
left out of the timed region, as ditbench's own `denoise` scope); `--scope pipeline` decodes
images too. The text encoder runs inside the timed call: diffusers pipelines encode the prompt
on every call unless prompt embeddings are passed, so compare such numbers only with each
other (docs/measurement.md explains ditbench's own scopes). The timing, warm-up, repeats and
result file come from python/ditbench_result.py; one rank only (world size 1).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ditbench_result  # noqa: E402

import torch  # noqa: E402
from diffusers import DiffusionPipeline  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--weights", required=True, help="a local diffusers pipeline folder")
parser.add_argument("--resolution", type=int, required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--precision", choices=["fp32", "tf32", "bf16", "fp16"], default="bf16")
parser.add_argument("--scope", choices=["denoise", "pipeline"], default="denoise")
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--prompt", default="A small cabin on a snowy mountain at dusk")
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
         "fp16": torch.float16}[args.precision]
pipe = DiffusionPipeline.from_pretrained(args.weights, torch_dtype=dtype, local_files_only=True)
pipe = pipe.to("cuda")
pipe.set_progress_bar_config(disable=True)


def generate():
    generator = torch.Generator(device="cuda").manual_seed(args.seed)
    pipe(prompt=args.prompt, height=args.resolution, width=args.resolution,
         num_inference_steps=args.steps, num_images_per_prompt=args.batch, generator=generator,
         output_type="latent" if args.scope == "denoise" else "pil")


ditbench_result.run(generate)
