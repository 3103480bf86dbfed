#!/bin/bash
# Coordinator overhead of the `command` workload (issue 12): N trivial command trials (a program
# that writes its result and exits: trivial.sh) through `ditbench run`, against a shell loop
# that starts the same N processes with the same environment variables, one after the other.
#
#   bench/command-overhead/run.sh [BUILD_DIR (default build-nt)] [N (default 200)] [ROUNDS (3)]
#
# Prints each round's wall times and the ratio run / loop; the figure quoted in
# docs/benchmarks.md is the median ratio over the rounds. Everything happens in a temp folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build-nt}" && pwd)
n=${2:-200}
rounds=${3:-3}
work=$(mktemp -d)  # under $TMPDIR (default /tmp): TMPDIR=/dev/shm takes the disk out
trap 'rm -rf "$work"' EXIT

cp "$here/trivial.sh" "$work/"
{
  echo "name: command-overhead"
  echo "workload: command"
  echo "command: [/bin/sh, trivial.sh, \"{i}\"]"
  echo "defaults: {warmup: 0, repeats: 1, timeout: 1m}"
  printf "matrix:\n  i: ["
  seq -s, 0 $((n - 1)) | tr -d '\n'
  printf "]\n"
} > "$work/sweep.yaml"

now() { date +%s.%N; }
ratios=()
for round in $(seq 1 "$rounds"); do
  rm -rf "$work/loop" "$work/results.db"* "$work/results.runs"
  # The shell loop: one folder per trial, then the same program with the rank environment.
  start=$(now)
  for i in $(seq 0 $((n - 1))); do
    dir="$work/loop/$i"
    mkdir -p "$dir"
    RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
      CUDA_VISIBLE_DEVICES= DITBENCH_TRIAL="$dir/trial.json" DITBENCH_RESULT="$dir" \
      /bin/sh "$work/trivial.sh" "$i"
  done
  loop=$(echo "$(now) - $start" | bc)

  start=$(now)
  "$build/ditbench" run "$work/sweep.yaml" --db "$work/results.db" --gpus cpu:1 > "$work/run.log"
  run=$(echo "$(now) - $start" | bc)
  ok=$(sqlite3 "$work/results.db" "SELECT COUNT(*) FROM results WHERE status = 'ok'")
  [ "$ok" = "$n" ] || { echo "only $ok of $n trials ok"; tail "$work/run.log"; exit 1; }
  ratio=$(echo "scale=3; $run / $loop" | bc)
  ratios+=("$ratio")
  printf "round %s: shell loop %.2f s, ditbench run %.2f s (%d trials ok), ratio %s\n" \
    "$round" "$loop" "$run" "$ok" "$ratio"
done
printf "median ratio over %s rounds: %s\n" "$rounds" \
  "$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n "$(((rounds + 1) / 2))p")"
