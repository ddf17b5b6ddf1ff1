#!/bin/bash
# The scale runs of docs/benchmarks.md ("Scale: HMC-ECS and ZZ-CV at n = 10^5 … 10^8"):
# perturbed HMC-ECS and ZZ-CV on the higgs-like files at each n, each run's wall time and peak
# resident memory (anonymous and file-backed, polled every 0.2 s from /proc/PID/status), then
# the table (table.py). Linux only.
#
#   bench/scale/run.sh [--sizes "100000 1000000 10000000 100000000"] [--old BIN] [--repeat K]
#
# --repeat K runs HMC-ECS K times at each n, the sizes alternating (10^5, 10^6, …, 10^5, …), and
# the table keeps each n's fastest sampling phase and lists every run's per-iteration time: the
# machine is shared, and a neighbour's burst can slow one run by half.
# Data: target/peers/work/data/higgs_like_n{N}_seed1.bin, written by
# `python bench/peers/gen_data.py --n N --seed 1 --outdir target/peers/work/data` (streamed above
# 2e6 rows). --old BIN adds the whole-run comparison at n = 1e7 against another tallmc binary on
# one thread. Output: target/scale/ (one folder per run, results.txt, table.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sizes="100000 1000000 10000000 100000000"
old=""
repeat=1
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --old) old=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "unknown argument $1 (expected --sizes \"N …\", --old BIN or --repeat K)" >&2; exit 2 ;;
  esac
done
data=$root/target/peers/work/data
out=$root/target/scale
mkdir -p "$out"; rm -f "$out/results.txt"
for n in $sizes; do
  [ -f "$data/higgs_like_n${n}_seed1.bin" ] || { echo "missing $data/higgs_like_n${n}_seed1.bin: run gen_data.py --n $n (see above)" >&2; exit 1; }
done
(cd "$root" && cargo build --release -p tallmc-cli)
bin=$root/target/release/tallmc

# measure TAG CMD…: runs CMD, appends "TAG rc=… wall=… anon_MB=… file_MB=…" to results.txt
measure() {
  local tag=$1; shift
  local start; start=$(date +%s.%N)
  "$@" > "$out/$tag.log" 2>&1 &
  local pid=$! anon=0 file=0 a f
  while kill -0 $pid 2>/dev/null; do
    a=$(awk '/RssAnon/{print $2}' /proc/$pid/status 2>/dev/null || true)
    f=$(awk '/RssFile/{print $2}' /proc/$pid/status 2>/dev/null || true)
    [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
    [ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
    sleep 0.2
  done
  local rc=0; wait $pid || rc=$?
  local end; end=$(date +%s.%N)
  echo "$tag rc=$rc wall=$(echo "$end - $start" | bc) anon_MB=$((anon / 1024)) file_MB=$((file / 1024))" | tee -a "$out/results.txt"
}
# Reads a file once so the run after starts on a warm page cache (pointless above the RAM size).
warm() { cat "$1" > /dev/null; }
ecs() { echo sample hmc-ecs --model logistic --no-intercept --overwrite --data "$1" --subsample 1300 --blocks 100 --chains 1 --warmup 500 --draws 3000 --seed 1; }

warm "$bin"
case $repeat in ''|*[!0-9]*|0) echo "--repeat expects a positive integer, got '$repeat'" >&2; exit 2 ;; esac
for r in $(seq "$repeat"); do
  for n in $sizes; do
    f=$data/higgs_like_n${n}_seed1.bin
    [ "$n" -lt 100000000 ] && warm "$f"
    tag="ecs_$n"; [ "$r" -gt 1 ] && tag="ecs_${n}_r$r"
    measure "$tag" "$bin" $(ecs "$f") --out "$out/$tag" --threads 2
  done
done
if [ -n "$old" ]; then
  f=$data/higgs_like_n10000000_seed1.bin
  for cfg in "old $old 1" "new1 $bin 1" "new2 $bin 2"; do
    set -- $cfg
    warm "$2"; warm "$f"
    measure "cmp_$1" "$2" $(ecs "$f") --out "$out/cmp_$1" --threads "$3"
  done
fi
for n in $sizes; do
  f=$data/higgs_like_n${n}_seed1.bin
  [ "$n" -lt 100000000 ] && warm "$f"
  measure "zz_$n" "$bin" sample zigzag-cv --model logistic --no-intercept --overwrite --data "$f" --out "$out/zz_$n" --chains 2 --seed 1 --threads 2
done
python3 "$root/bench/scale/table.py" "$out" | tee "$out/table.md"
