#!/usr/bin/env python
"""Bulk ESS (arviz) of tallmc's draws, so that both sides of `cargo xtask bench --peers` are scored
by the same ESS estimator as run_numpyro.py (arviz `ess(method="bulk")`).

Reads the CmdStan-layout CSV files `tallmc sample` writes (lines starting with `#` are comments;
the header names the columns; parameter columns are those whose name does not end in `__`) and
prints one JSON object: per-coordinate bulk ESS, its min / median / max, means and sds.

This is the tallmc team's own script (not one of the vendored peer scripts).
"""
import argparse
import json

import numpy as np
import arviz as az


def read_chain(path):
    with open(path) as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    header = [h.strip() for h in lines[0].split(",")]
    rows = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    keep = [j for j, h in enumerate(header) if not h.endswith("__")]
    return [header[j] for j in keep], rows[:, keep]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", nargs="+", help="one CSV file per chain")
    args = ap.parse_args()
    names, chains = None, []
    for p in args.csv:
        nm, draws = read_chain(p)
        names = names or nm
        chains.append(draws)
    draws = np.stack(chains)  # (chains, draws, d)
    ds = az.convert_to_dataset({"theta": draws})
    ess = np.asarray(az.ess(ds, method="bulk")["theta"].values)
    flat = draws.reshape(-1, draws.shape[-1])
    print(json.dumps({
        "names": names,
        "chains": int(draws.shape[0]),
        "draws_per_chain": int(draws.shape[1]),
        "ess_bulk": ess.tolist(),
        "ess_min": float(ess.min()),
        "ess_median": float(np.median(ess)),
        "ess_max": float(ess.max()),
        "mean": flat.mean(0).tolist(),
        "sd": flat.std(0, ddof=1).tolist(),
        "arviz": az.__version__,
    }))


if __name__ == "__main__":
    main()
