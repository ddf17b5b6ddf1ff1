#!/usr/bin/env python3
"""The scale tables of docs/benchmarks.md from bench/scale/run.sh's output folder (stdlib only)."""
import json
import os
import statistics
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "target/scale"
res = {}
for line in open(os.path.join(out, "results.txt")):
    parts = line.split()
    if len(parts) != 5:
        continue
    fields = dict(p.split("=") for p in parts[1:])
    res[parts[0]] = {k: float(v) for k, v in fields.items()}


def summary(tag):
    return json.load(open(os.path.join(out, tag, "summary.json")))


def ess(s):
    e = [p["ess_bulk"] for p in s["parameters"]]
    return min(e), statistics.median(e)


sizes = sorted({int(t.split("_")[1]) for t in res if t.startswith(("ecs_", "zz_"))})


def per_iteration_ms(tag):
    s = summary(tag)
    return 1000 * s["totals"]["wall_seconds"]["sampling_max_over_chains"] / s["draws"]


# HMC-ECS: with --repeat, the runs at one n are ecs_N, ecs_N_r2, …; the row is the run with the
# fastest sampling phase, and the last column lists every run's per-iteration time.
print("| n | setup s | warmup s | per-iteration ms (fastest run) | every run's per-iteration ms | min / median bulk ESS | ESS/s (whole run) | evals per draw | anon RSS MB | file RSS MB |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
fastest = {}
for n in sizes:
    runs = [t for t in res if t == f"ecs_{n}" or t.startswith(f"ecs_{n}_r")]
    if not runs:
        continue
    t = min(runs, key=per_iteration_ms)
    fastest[n] = per_iteration_ms(t)
    s = summary(t)
    w = s["totals"]["wall_seconds"]
    lo, med = ess(s)
    every = ", ".join(f"{per_iteration_ms(r):.3f}" for r in sorted(runs))
    anon = max(res[r]["anon_MB"] for r in runs)
    print(f"| {n:,} | {w['setup']:.2f} | {w['warmup_max_over_chains']:.2f} | "
          f"{fastest[n]:.3f} | {every} | {lo:.0f} / {med:.0f} | "
          f"{lo / w['total']:.0f} | {s['totals']['evals_per_draw']:.0f} | {anon:.0f} | {res[t]['file_MB']:.0f} |")
if fastest:
    base = min(fastest)
    print()
    print("Per-iteration time relative to n = " + f"{base:,}: " + ", ".join(
        f"{n:,}: {fastest[n] / fastest[base]:.2f}×" for n in sorted(fastest)))
if "cmp_old" in res:
    print()
    print("| run at n = 1e7 | setup s | warmup s | sampling s | total s | vs. old, one thread |")
    print("|---|---:|---:|---:|---:|---:|")
    base = summary("cmp_old")["totals"]["wall_seconds"]["total"]
    for t in ["cmp_old", "cmp_new1", "cmp_new2"]:
        w = summary(t)["totals"]["wall_seconds"]
        print(f"| {t} | {w['setup']:.2f} | {w['warmup_max_over_chains']:.2f} | "
              f"{w['sampling_max_over_chains']:.2f} | {w['total']:.2f} | {w['total'] / base:.2f}× |")
print()
print("| n | setup s | sampling s | min / median bulk ESS | per-datum evals (sampling) | evals per ESS (median) | anon RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n in sizes:
    t = f"zz_{n}"
    if t not in res:
        continue
    s = summary(t)
    w = s["totals"]["wall_seconds"]
    lo, med = ess(s)
    ev = s["totals"]["evals_sampling"]["total"]
    print(f"| {n:,} | {w['setup']:.2f} | {w['sampling_max_over_chains']:.2f} | {lo:.0f} / {med:.0f} | "
          f"{ev:,} | {ev / med:,.0f} | {res[t]['anon_MB']:.0f} |")
