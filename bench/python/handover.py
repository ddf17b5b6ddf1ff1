"""How long handing a run's draws back to Python takes: from memory (what `tallmc.sample` does)
against the CSV round trip it replaced (the run writes CmdStan CSV files, Python parses them
back with `tallmc.read_run`). 10⁶ draws × 30 parameters (RWM on a 30-parameter logistic
regression of 200 rows, one chain: sampling is cheap, so the hand-over dominates).

    python bench/python/handover.py [--draws 1000000] [--repeat 3]

Both sides are measured in the same run, fastest of `--repeat`:

* memory: the time `tallmc.sample` spends outside the Rust run (the call's elapsed time minus
  the run's own wall time from its summary: copying the sinks into NumPy arrays and building
  InferenceData);
* CSV: writing the files (the run's wall time with `output_dir` minus without) plus
  `tallmc.read_run` parsing them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time

import numpy as np

import tallmc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    n, p = 200, 29
    X = rng.normal(size=(n, p))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.linspace(-0.5, 0.5, p)))).astype(np.float64)
    model = tallmc.LogisticRegression(X, y)
    settings = dict(chains=1, warmup=100, draws=args.draws, seed=1, progress=False)
    memory, csv = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        idata = tallmc.sample(model, tallmc.Rwm(), **settings)
        elapsed = time.perf_counter() - start
        wall = json.loads(idata.attrs["tallmc_summary"])["totals"]["wall_seconds"]["total"]
        memory.append(elapsed - wall)
        assert idata.posterior["beta"].shape == (1, args.draws, p + 1)
        del idata

        out = tempfile.mkdtemp(prefix="tallmc-handover-")
        try:
            start = time.perf_counter()
            with_files = tallmc.sample(model, tallmc.Rwm(), output_dir=out, **settings)
            elapsed_files = time.perf_counter() - start
            wall_files = json.loads(with_files.attrs["tallmc_summary"])["totals"]["wall_seconds"]["total"]
            del with_files
            start = time.perf_counter()
            read = tallmc.read_run(out)
            parse = time.perf_counter() - start
            assert read.posterior["beta"].shape == (1, args.draws, p + 1)
            del read
        finally:
            shutil.rmtree(out, ignore_errors=True)
        write = max(wall_files - wall, 0.0)
        csv.append(write + parse)
        print(f"memory {memory[-1]:.3f} s   csv: write {write:.3f} s + parse {parse:.3f} s "
              f"= {csv[-1]:.3f} s   (python outside the run with files: "
              f"{elapsed_files - wall_files:.3f} s)")
    best_memory, best_csv = min(memory), min(csv)
    print(f"\n{args.draws:,} draws x {p + 1} parameters, fastest of {args.repeat}: "
          f"memory {best_memory:.3f} s, CSV round trip {best_csv:.3f} s, "
          f"ratio {best_memory / best_csv:.3f}")


if __name__ == "__main__":
    main()
