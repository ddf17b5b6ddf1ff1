#!/usr/bin/env python3
"""A tall Parquet table for the scaling numbers of docs/scaling.md: N rows of 29 standard-normal
covariates x0 … x28 (float64, or float32 with --dtype float32: half the disk, as the HIGGS data
ship) and a binary response y from a logistic model, in S shards
part.0.parquet … part.{S-1}.parquet (snappy, as pyarrow and Dask write by default), one shard
in memory at a time.

    python bench/scale/gen_parquet.py --n 10000000 --shards 64 --out target/scale/parquet_1e7

Needs numpy and pyarrow. Seeded: the same N, S and seed give the same files' values."""
import argparse
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

P = 29


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    beta = np.linspace(-1.0, 1.0, P) / np.sqrt(P)
    bounds = np.linspace(0, a.n, a.shards + 1).astype(np.int64)
    for s in range(a.shards):
        rng = np.random.default_rng([a.seed, s])
        rows = int(bounds[s + 1] - bounds[s])
        x = rng.standard_normal((rows, P)).astype(a.dtype)
        eta = 0.3 + x @ beta
        y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-eta))).astype(a.dtype)
        cols = {f"x{j}": x[:, j] for j in range(P)}
        cols["y"] = y
        pq.write_table(pa.table(cols), os.path.join(a.out, f"part.{s}.parquet"),
                       row_group_size=1 << 17)
        print(f"shard {s + 1}/{a.shards}: {rows} rows", flush=True)


if __name__ == "__main__":
    main()
