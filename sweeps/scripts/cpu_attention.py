#!/usr/bin/env python3
"""A small attention benchmark for sweeps/command-cpu.yaml: the `command` workload on CPU.

    python3 cpu_attention.py --tokens-side 16 --steps 2 --threads 1 --precision fp32 \
        [--attention math]

One iteration runs `--steps` multi-head self-attention layers (8 heads of 64) over a
tokens-side^2 token sequence: with torch (when `import torch` works) as torch's
scaled_dot_product_attention on CPU with `--threads` intra-op threads, else as a pure-Python
stand-in of the same shape, much smaller, so that the example runs anywhere. The timing, the
trial's warm-up and repeats, and the result file are python/ditbench_result.py's.

`--attention` (sweeps/attention-command-cpu.yaml's custom axis) forces one of torch's SDPA
kernels (math, flash, efficient, cudnn) through torch.nn.attention.sdpa_kernel; `auto` leaves
the choice to torch. A forced kernel needs torch, and a kernel the device cannot run fails
the trial with torch's reason: it is never replaced by another.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ditbench_result  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--tokens-side", type=int, required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--precision", default="fp32")
parser.add_argument("--attention", default="auto")
args = parser.parse_args()
tokens = args.tokens_side * args.tokens_side
heads, head_dim = 8, 64

try:
    import torch
except ImportError:
    torch = None

KERNELS = {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
           "cudnn": "CUDNN_ATTENTION"}
if args.attention != "auto" and args.attention not in KERNELS:
    sys.exit("cpu_attention.py: --attention %r: expected auto, %s" %
             (args.attention, ", ".join(KERNELS)))
if args.attention != "auto" and torch is None:
    sys.exit("cpu_attention.py: --attention %s needs torch (run from the project's .venv)" %
             args.attention)


def kernel_scope():
    """The SDPA kernel --attention names, for a `with`; a no-op scope for auto."""
    import contextlib
    if args.attention == "auto":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(getattr(SDPBackend, KERNELS[args.attention]))


if torch is not None:
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
             "tf32": torch.float32}[args.precision]
    q, k, v = (torch.randn(1, heads, tokens, head_dim, dtype=dtype) for _ in range(3))

    def iteration():
        with torch.inference_mode(), kernel_scope():
            out = q
            for step in range(args.steps):
                with ditbench_result.stage("step:%d" % step):
                    out = torch.nn.functional.scaled_dot_product_attention(out, k, v)
        ditbench_result.metric("tokens", tokens)
else:
    rng = random.Random(0)
    small = max(4, args.tokens_side)  # the stand-in: one head, small vectors
    vectors = [[rng.random() for _ in range(16)] for _ in range(small)]

    def iteration():
        for step in range(args.steps):
            with ditbench_result.stage("step:%d" % step):
                for a in vectors:
                    sum(sum(x * y for x, y in zip(a, b)) for b in vectors)
        ditbench_result.metric("tokens", small)

ditbench_result.run(iteration)
