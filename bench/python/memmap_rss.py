"""Anonymous resident memory while the Python package samples a 10⁷-row memory-mapped array.

    pip install ./crates/tallmc-py
    python bench/python/memmap_rss.py [target/peers/work/data/higgs_like_n10000000_seed1.bin]

Maps the tall-data binary file written by bench/peers/gen_data.py (X: n × d float64 row-major,
then y) as two NumPy arrays with np.memmap — no copy, no second file — fits the logistic
regression with perturbed HMC-ECS (m = 1300, G = 100, 2 chains, 500 warmup + 1000 draws), and
reports RssAnon (anonymous memory: what a copy of the data would raise; mapped file pages are
RssFile) before the run and its peak during the run, polled every 20 ms. The issue's bar: growth
< 10 % of X's size. The CI-sized test is crates/tallmc-py/tests/test_interrupt_and_memory.py.
"""

import json
import os
import sys
import threading
import time

import arviz  # noqa: F401  (imported before the baseline: its first import is not data)
import numpy as np

import tallmc


def rss_kb(field: str) -> int:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main(path: str) -> None:
    with open(os.path.splitext(path)[0] + ".json") as f:
        header = json.load(f)
    n, d = header["n"], header["d"]
    X = np.memmap(path, dtype="<f8", mode="r", offset=header["x_offset_bytes"], shape=(n, d))
    y = np.memmap(path, dtype="<f8", mode="r", offset=header["y_offset_bytes"], shape=(n,))
    before = rss_kb("RssAnon")
    peak = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kb("RssAnon"))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.time()
    try:
        idata = tallmc.sample(tallmc.LogisticRegression(X, y, intercept=False),
                              tallmc.HmcEcs(subsample=1300, blocks=100), chains=2, warmup=500,
                              draws=1000, seed=1, progress=False)
    finally:
        done.set()
        watcher.join()
    seconds = time.time() - start
    x_mb = X.nbytes / 2**20
    growth = (peak[0] - before) / 1024
    print(f"n = {n:,}, d = {d}: X is {x_mb:,.0f} MB, memory-mapped")
    print(f"RssAnon before {before / 1024:.1f} MB, peak during sampling {peak[0] / 1024:.1f} MB: "
          f"growth {growth:.1f} MB = {100 * growth / x_mb:.2f} % of X (bar: < 10 %)")
    print(f"RssFile after: {rss_kb('RssFile') / 1024:,.0f} MB (the mapped pages)")
    print(f"run: {seconds:.1f} s, draws {idata.posterior['theta'].shape}, "
          f"data per iteration {100 * idata.attrs['data_fraction_per_iteration']:.4f} %")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1
         else "target/peers/work/data/higgs_like_n10000000_seed1.bin")
