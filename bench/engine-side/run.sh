#!/bin/bash
# ditbench's own PixArt worker and the reference engine (diffusers' PixArtAlphaPipeline behind
# python/ditbench_engine_server.py, over HTTP) on the same tiny weights and shapes, on CPU,
# side by side (issue 52). Both load build/engine-tiny-pipeline (python/make_tiny_pipeline.py):
# the worker its transformer and VAE folders (`weights`, `vae_weights`), the engine the whole
# pipeline. Both at scope pipeline (denoising steps and the VAE decode), fp32, 2 threads, the
# same resolutions and step counts; the engine's latency also holds what only a server does:
# its tiny T5 text encoder, the scheduler's Python, PNG encoding, base64 and HTTP.
#
#   bench/engine-side/run.sh [BUILD_DIR (default build)] [ROUNDS (default 2)]
#
# The two sweeps alternate, ROUNDS times each, into one database (each round a fresh
# campaign); prints every trial's median and the per-shape ratio engine / worker from the last
# round. Everything else happens in a temp folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pipeline=$build/engine-tiny-pipeline
if [ ! -f "$pipeline/model_index.json" ]; then
  "$root/.venv/bin/python" "$root/python/make_tiny_pipeline.py" "$pipeline"
fi
for sweep in worker engine; do
  sed -e "s|@PIPELINE@|$pipeline|g" -e "s|@ROOT@|$root|g" "$here/$sweep.yaml" > "$work/$sweep.yaml"
done
for round in $(seq 1 "$rounds"); do
  for sweep in worker engine; do
    "$build/ditbench" run "$work/$sweep.yaml" --db "$work/side.db" --gpus cpu:1 --new \
      > "$work/$sweep-$round.log" 2>&1 || { cat "$work/$sweep-$round.log"; exit 1; }
  done
done
"$build/ditbench" query --db "$work/side.db" --sql "
  SELECT campaign, sweep, resolution AS px, steps, ROUND(latency_ms, 1) AS median_ms,
         ROUND(cov, 3) AS cov, busy
  FROM results WHERE status = 'ok' ORDER BY px, steps, campaign"
"$build/ditbench" query --db "$work/side.db" --sql "
  WITH last AS (SELECT * FROM results
                WHERE status = 'ok' AND campaign > (SELECT MAX(campaign) - 2 FROM results))
  SELECT w.resolution AS px, w.steps, ROUND(w.latency_ms, 1) AS worker_ms,
         ROUND(e.latency_ms, 1) AS engine_ms, ROUND(e.latency_ms / w.latency_ms, 2) AS ratio
  FROM last w JOIN last e ON w.sweep = 'side-worker' AND e.sweep = 'side-engine'
   AND w.resolution = e.resolution AND w.steps = e.steps
  ORDER BY px, w.steps"
