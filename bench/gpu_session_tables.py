#!/usr/bin/env python3
"""bench/gpu-session's tables, ready to paste into docs/benchmarks.md.

Reads the JSON lines bench/reference_speed.py --device cuda (families.jsonl: one line per
model, and the VAE decode) and bench/matmul_speed.py (matmul.jsonl) wrote, and the session's
header facts, and prints markdown: ditbench eager and cuda_graph against diffusers' eager model
per family, the VAE decode, the matrix product through the worker and through Python, and
energy per image. Nothing is computed here that the lines do not hold, except ratios' display.

    python3 bench/gpu_session_tables.py --families OUT/families.jsonl --matmul OUT/matmul.jsonl
        [--build REV] [--minutes M] > OUT/benchmarks-section.md
"""
import argparse
import json
import os


def lines(path):
    if not path or not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.strip()]


def ms(value):
    return "-" if value is None else f"{value:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families")
    parser.add_argument("--matmul")
    parser.add_argument("--build", default="?")
    parser.add_argument("--minutes", default="?")
    args = parser.parse_args()
    families, matmul = lines(args.families), lines(args.matmul)
    models = [f for f in families if f["what"] == "denoise"]
    vae = [f for f in families if f["what"] == "vae decode"]
    first = (models or vae or matmul or [{}])[0]
    print(f"### One {first.get('device', 'GPU')}, build `{args.build}` (bench/gpu-session, "
          f"{args.minutes} min)\n")
    print(f"torch {first.get('torch', '?')}, diffusers {first.get('diffusers', '?')}; seeded "
          "random weights, full depth, batch 1, one GPU; every figure a median, ditbench's the "
          "median over rounds of each campaign's `latency_ms`, each round's diffusers and "
          "ditbench runs back to back.\n")
    if models:
        print("| model | px | steps | diffusers eager ms | ditbench eager ms | ratio | "
              "ditbench cuda_graph ms | ratio | round ratios eager / graph |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for m in models:
            d, r, rr = m["ditbench_ms"], m["ratio"], m["round_ratios"]
            print(f"| {m['model']} | {m['resolution']} | {m['steps']} | {ms(m['diffusers_ms'])} | "
                  f"{ms(d.get('eager'))} | {r.get('eager', '-')} | {ms(d.get('cuda_graph'))} | "
                  f"{r.get('cuda_graph', '-')} | {rr.get('eager', [])} / "
                  f"{rr.get('cuda_graph', [])} |")
        print()
    if vae:
        v = vae[0]
        print("| VAE decode | px | diffusers AutoencoderKL.decode ms | ditbench `decode` stage ms "
              "| ratio |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| PixArt-alpha's (SD) VAE | {v['resolution']} | {ms(v['diffusers_ms'])} | "
              f"{ms(v['ditbench_ms'].get('decode'))} | {v['ratio'].get('decode', '-')} |\n")
    if matmul:
        m = matmul[0]
        print("| operation | Python torch ms (TFLOP/s) | ditbench Measure ms (TFLOP/s) | "
              "textbook loop in the worker ms (TFLOP/s) | ditbench / Python |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| {m['what']} | {m['python_ms']} ({m['python_tflops']}) | {m['ditbench_ms']} "
              f"({m['ditbench_tflops']}) | {m['textbook_ms']} ({m['textbook_tflops']}) | "
              f"{m['ditbench_over_python']} |\n")
        print(f"cuBLAS loaded by Python: {', '.join(m['python_libraries']) or '?'}; by the "
              f"worker's build: {', '.join(m['worker_libraries']) or '?'}.\n")
    if models:
        print("| model | J/image eager | J/image cuda_graph | note |")
        print("| --- | --- | --- | --- |")
        for m in models:
            j = m["joules_per_image"]
            print(f"| {m['model']} | {j.get('eager', '-')} | {j.get('cuda_graph', '-')} | "
                  f"{'; '.join(m['energy_notes']) or '-'} |")
        print("\nJ/image: `joules_per_image`, NVML's total energy counter of the GPU board over "
              "the timed iterations (docs/measurement.md, \"Energy\"), median over rounds.\n")
    errors = [f"{m['model']}: {e}" for m in families for e in m.get("errors", [])]
    if errors:
        print("Trials that did not measure: " + "; ".join(errors) + "\n")


if __name__ == "__main__":
    main()
