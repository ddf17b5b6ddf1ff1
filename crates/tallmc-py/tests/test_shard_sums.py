"""The per-shard kernel a Dask worker runs (``tallmc._tallmc.shard_sums``): one pass over one
shard's rows, read in place, whose results the driver adds in shard order. The bit-for-bit
equality with the whole sharded pass is tested in Rust (crates/tallmc-run/tests/run/shard_kernel.rs);
here: the binding's numbers, its determinism, and its errors."""

import json

import numpy as np
import pytest

import tallmc
from tallmc import _tallmc

LENGTHS = [701, 1200, 499]


def data():
    rng = np.random.default_rng(4)
    n = sum(LENGTHS)
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + X @ [0.5, -1.0])))).astype(np.float64)
    return X, y


def kinds():
    return ["value", "gradient", "hessian", {"control-variate": {"order": 2}}]


def shard_sums(model, X, y, theta, kind):
    return _tallmc.shard_sums(json.dumps(model.spec()), X, y, ["a", "b"], list(theta),
                              json.dumps(kind), sum(LENGTHS))


def test_shards_added_in_order_match_the_whole_pass_to_rounding():
    X, y = data()
    model = tallmc.LogisticRegression(X, y)
    theta = [0.2, 0.4, -0.8]
    edges = np.cumsum([0] + LENGTHS)
    for kind in kinds():
        parts = [shard_sums(model, X[a:b].copy(), y[a:b].copy(), theta, kind)
                 for a, b in zip(edges[:-1], edges[1:])]
        total = parts[0].copy()
        for p in parts[1:]:
            total += p
        whole = shard_sums(model, X, y, theta, kind)
        assert total.shape == whole.shape
        np.testing.assert_allclose(total, whole, rtol=1e-11, atol=1e-11 * np.abs(whole).max())
        again = shard_sums(model, X[:701].copy(), y[:701].copy(), theta, kind)
        assert again.tobytes() == parts[0].tobytes()
    # The value at θ is the log-likelihood: Σ log σ(±η).
    eta = 0.2 + X @ [0.4, -0.8]
    ll = np.sum(y * eta - np.logaddexp(0, eta))
    assert shard_sums(model, X, y, theta, "value")[0] == pytest.approx(ll, rel=1e-12)


def test_bad_requests_are_value_errors():
    X, y = data()
    model = tallmc.LogisticRegression(X, y)
    with pytest.raises(ValueError, match="d = 3"):
        shard_sums(model, X, y, [0.0, 0.0], "value")
    with pytest.raises(ValueError, match="pass kind"):
        shard_sums(model, X, y, [0.0] * 3, "curvature")
    with pytest.raises(ValueError, match="standardize"):
        std = tallmc.LogisticRegression(X, y, standardize=True)
        shard_sums(std, X, y, [0.0] * 3, "value")
