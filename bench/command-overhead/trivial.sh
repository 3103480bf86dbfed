#!/bin/sh
# The trivial program of bench/command-overhead: writes a one-sample result (worker contract
# v1) into $DITBENCH_RESULT and exits. Nothing else, so that what is timed is process start-up
# and the coordinator's own work.
printf '{"format":"ditbench-rank-result","version":1,"rank":%s,"world_size":%s,"status":"ok","error":"","device":"cpu","backend":"none","samples":[{"iteration":0,"stage":"iteration","ms":0.001,"warmup":false}]}\n' \
  "$RANK" "$WORLD_SIZE" > "$DITBENCH_RESULT/rank$RANK.json.tmp" &&
  mv "$DITBENCH_RESULT/rank$RANK.json.tmp" "$DITBENCH_RESULT/rank$RANK.json"
