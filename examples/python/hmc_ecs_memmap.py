"""A 10⁶-row logistic regression, memory-mapped, fitted with perturbed HMC-ECS.

    pip install ./crates/tallmc-py             # once, from the repository's root
    python examples/python/hmc_ecs_memmap.py [DIR]

Writes X.npy (10⁶ × 20 float64, 160 MB) and y.npy into DIR (a temporary directory by default)
without holding them in memory, opens them with np.load(mmap_mode="r") — tallmc reads the
arrays in place, nothing is copied — and samples 4 chains of HMC-ECS, which evaluates 1,300
rows per gradient instead of 10⁶. Prints ArviZ's summary, the data used per iteration and the
evaluations, and the true θ beside the posterior means.
"""

import sys
import tempfile
from pathlib import Path

import arviz as az
import numpy as np

import tallmc


def write_data(folder: Path, n: int = 1_000_000, p: int = 20, seed: int = 1) -> np.ndarray:
    """X ~ N(0, 1) and y ~ Bernoulli(1 / (1 + exp(−Xθ))), written in blocks of 100,000 rows."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(scale=0.5, size=p)
    X = np.lib.format.open_memmap(folder / "X.npy", mode="w+", dtype=np.float64, shape=(n, p))
    y = np.lib.format.open_memmap(folder / "y.npy", mode="w+", dtype=np.float64, shape=(n,))
    for start in range(0, n, 100_000):
        block = rng.normal(size=(min(100_000, n - start), p))
        X[start:start + len(block)] = block
        y[start:start + len(block)] = rng.random(len(block)) < 1 / (1 + np.exp(-block @ theta))
    X.flush()
    y.flush()
    return theta


def main(folder: Path) -> None:
    theta = write_data(folder)
    X = np.load(folder / "X.npy", mmap_mode="r")
    y = np.load(folder / "y.npy", mmap_mode="r")

    model = tallmc.LogisticRegression(X, y, prior_sd=10.0, intercept=False)
    idata = tallmc.sample(model, tallmc.HmcEcs(subsample=1300, blocks=100),
                          chains=4, warmup=1000, draws=1000, seed=1)

    print(az.summary(idata, var_names=["beta"]))
    print(f"data per iteration: {100 * idata.attrs['data_fraction_per_iteration']:.3f}% of "
          f"{idata.attrs['num_rows']:,} rows; per-datum evaluations: "
          f"{idata.attrs['evaluations_total']:,}")
    means = idata.posterior["beta"].mean(("chain", "draw")).values
    print("true θ:     ", np.round(theta[:5], 3), "…")
    print("posterior:  ", np.round(means[:5], 3), "…")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as d:
            main(Path(d))
