"""Shared data for the Python tests: small, seeded data sets (the tests are sized for CI's two
cores: every run takes seconds)."""

import numpy as np
import pytest


def logistic_data(n: int, p: int, seed: int):
    """Covariates N(0, 1) and responses of a logistic model with a known θ (no intercept)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    theta = np.linspace(-1.0, 1.0, p)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ theta))).astype(np.float64)
    return X, y


@pytest.fixture
def logistic_npy(tmp_path):
    """A 20,000 × 5 logistic regression saved with np.save, opened memory-mapped."""
    X, y = logistic_data(20_000, 5, 11)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    return (np.load(tmp_path / "X.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r"),
            tmp_path)
