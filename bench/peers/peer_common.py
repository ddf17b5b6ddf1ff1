"""Helpers shared by the peer scripts run_numpyro.py and run_pdmpjax.py (numpy and the standard
library only, so that both virtual environments can import it).

Written by the tallmc team (not vendored).
"""

import json
import os

import numpy as np


def union_length(spans, t0, t1):
    """Length of the union of the (start, end) `spans` clipped to [t0, t1]."""
    clipped = sorted((max(a, t0), min(b, t1)) for a, b in spans if b > t0 and a < t1)
    total, cur_a, cur_b = 0.0, None, None
    for a, b in clipped:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total


def load_higgs_like(data_dir, n, seed):
    """X (n x d), y (n) and the metadata of `higgs_like_n{n}_seed{seed}.{bin,json}` (gen_data.py)."""
    stem = os.path.join(data_dir, f"higgs_like_n{n}_seed{seed}")
    with open(stem + ".json") as f:
        meta = json.load(f)
    d = meta["d"]
    raw = np.fromfile(stem + ".bin", dtype="<f8")
    assert raw.size == n * (d + 1)
    X = raw[: n * d].reshape(n, d)
    y = raw[n * d:]
    return X, y, meta
