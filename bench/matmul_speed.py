#!/usr/bin/env python3
"""A bf16 N^3 matrix product through ditbench's worker code and through Python's torch, in one run.

Is the gap between 685 TFLOP/s (an 8192^3 bf16 product timed through ditbench) and 790 TFLOP/s
(measured elsewhere through Python) real? Rounds alternate, so that the GPU's clocks and
temperature hit both sides alike:
  python   : torch.mm in this process, timed with a CUDA event pair per product after warm-up;
  ditbench : build/bench/fidelity_bench (Measure() with the worker's device clock, and its
             textbook event loop, in the worker's LibTorch build), one round per call.
Prints one JSON line: each side's median ms and TFLOP/s (2 N^3 / time), their ratio, the
per-round medians, and which cuBLAS / cuBLASLt each side loaded (a different library, or a
different heuristic's kernel, is the usual cause of such a gap; `--profile` in fidelity_bench
names the kernel).

    python3 bench/matmul_speed.py --fidelity-bench build/bench/fidelity_bench
        [--size 8192] [--rounds 3] [--iterations 30] [--jsonl out.jsonl]
"""
import argparse
import json
import re
import statistics
import subprocess

import torch


def loaded_libraries(pid="self"):
    names = set()
    for line in open(f"/proc/{pid}/maps"):
        path = line.split()[-1]
        if any(k in path for k in ("libcublas", "libcublasLt", "libcudart")):
            names.add(path)
    return sorted(names)


def python_round(a, b, iterations):
    for _ in range(5):
        torch.mm(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.mm(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def ditbench_round(program, size, iterations):
    """fidelity_bench's matmul row: (ditbench median ms, textbook median ms)."""
    out = subprocess.run(
        [program, "--device", "cuda", "--size", str(size), "--precision", "bf16",
         "--model", "pixart-alpha-tiny", "--resolution", "256", "--rounds", "1",
         "--iterations", str(iterations)],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        match = re.match(rf"\| matmul {size}\^3 bf16 \| ([\d.]+) \| ([\d.]+) \|", line)
        if match:
            return float(match.group(1)), float(match.group(2))
    raise SystemExit(f"matmul_speed: no matmul row in fidelity_bench's output:\n{out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fidelity-bench", required=True)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--jsonl")
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    n = args.size
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    python_ms, ours_ms, textbook_ms = [], [], []
    for _ in range(args.rounds):
        python_ms.append(statistics.median(python_round(a, b, args.iterations)))
        ours, textbook = ditbench_round(args.fidelity_bench, n, args.iterations)
        ours_ms.append(ours)
        textbook_ms.append(textbook)
    tflops = lambda ms: round(2.0 * n ** 3 / (ms / 1000.0) / 1e12, 1)
    worker_libs = subprocess.run(["ldd", args.fidelity_bench], capture_output=True,
                                 text=True).stdout
    line = {
        "what": f"matmul {n}^3 bf16", "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__, "rounds": args.rounds, "iterations": args.iterations,
        "python_ms": round(statistics.median(python_ms), 4),
        "ditbench_ms": round(statistics.median(ours_ms), 4),
        "textbook_ms": round(statistics.median(textbook_ms), 4),
        "python_tflops": tflops(statistics.median(python_ms)),
        "ditbench_tflops": tflops(statistics.median(ours_ms)),
        "textbook_tflops": tflops(statistics.median(textbook_ms)),
        "ditbench_over_python": round(statistics.median(ours_ms) / statistics.median(python_ms), 4),
        "round_medians_ms": {"python": python_ms, "ditbench": ours_ms, "textbook": textbook_ms},
        "python_libraries": loaded_libraries(),
        "worker_libraries": sorted({l.split("=>")[-1].split("(")[0].strip()
                                    for l in worker_libs.splitlines()
                                    if "cublas" in l or "cudart" in l}),
    }
    print(json.dumps(line), flush=True)
    if args.jsonl:
        with open(args.jsonl, "a") as out:
            out.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
