"""Models written in Python (tallmc.CustomModel, CustomModel.from_jax): the posterior of a
logistic regression written as a CustomModel agrees with the built-in model's within 4
combined MCSE (HMC-ECS and NUTS); a Python exception in the user's function reaches the caller
with its traceback; wrong shapes are clear errors; non-finite terms are rejections; samplers
that need what the model lacks refuse."""

import traceback

import arviz as az
import numpy as np
import pytest

import tallmc

N, P = 4000, 3
TRUTH = np.array([0.4, -0.9, 0.6])


@pytest.fixture(scope="module")
def logistic_data():
    r = np.random.default_rng(7)
    X = np.ascontiguousarray(np.c_[np.ones(N), r.normal(size=(N, P - 1))])
    y = (r.random(N) < 1.0 / (1.0 + np.exp(-X @ TRUTH))).astype(np.float64)
    return X, y


def log_terms(theta, batch):
    X, y = batch
    eta = X @ theta
    return y * eta - np.logaddexp(0.0, eta)


def grad_terms(theta, batch):
    X, y = batch
    return (y - 1.0 / (1.0 + np.exp(-(X @ theta))))[:, None] * X


def hess_terms(theta, batch):
    X, _ = batch
    s = 1.0 / (1.0 + np.exp(-(X @ theta)))
    return (-s * (1.0 - s))[:, None, None] * X[:, :, None] * X[:, None, :]


def summary(idata, var):
    s = az.summary(idata, var_names=[var], round_to="none")
    return s["mean"].to_numpy(), s["sd"].to_numpy(), s["mcse_mean"].to_numpy(), \
        s["mcse_sd"].to_numpy()


def assert_agree(a, b, what):
    """Means and sds of two runs within 4 combined MCSE."""
    (ma, sa, ema, esa), (mb, sb, emb, esb) = a, b
    tol_m = 4 * np.hypot(ema, emb)
    tol_s = 4 * np.hypot(esa, esb)
    assert np.all(np.abs(ma - mb) < tol_m), f"{what}: means {ma} vs {mb} (tol {tol_m})"
    assert np.all(np.abs(sa - sb) < tol_s), f"{what}: sds {sa} vs {sb} (tol {tol_s})"


@pytest.fixture(scope="module")
def builtin(logistic_data):
    X, y = logistic_data
    model = tallmc.LogisticRegression(np.ascontiguousarray(X[:, 1:]), y)
    idata = tallmc.sample(model, tallmc.Nuts(), chains=4, warmup=500, draws=1000, seed=3,
                          progress=False)
    return summary(idata, "beta")


@pytest.mark.parametrize("sampler", [tallmc.Nuts(), tallmc.HmcEcs()], ids=["nuts", "hmc-ecs"])
def test_numpy_logistic_agrees_with_the_builtin_model(logistic_data, builtin, sampler):
    X, y = logistic_data
    names = ["intercept", "x0", "x1"]
    model = tallmc.CustomModel(log_terms, (X, y), dim=P, names=names, grad_terms=grad_terms,
                               hess_terms=hess_terms)
    idata = tallmc.sample(model, sampler, chains=4, warmup=500, draws=1000, seed=5,
                          progress=False)
    assert list(idata.posterior.data_vars) == names
    ours = [summary(idata, n) for n in names]
    stacked = tuple(np.concatenate([o[k] for o in ours]) for k in range(4))
    assert_agree(stacked, builtin, f"CustomModel {sampler!r}")


def test_gradients_only_give_first_order_control_variates(logistic_data, builtin):
    X, y = logistic_data
    model = tallmc.CustomModel(log_terms, (X, y), dim=P, grad_terms=grad_terms)
    idata = tallmc.sample(model, tallmc.HmcEcs(), chains=4, warmup=500, draws=1000, seed=5,
                          progress=False)
    assert_agree(summary(idata, "theta"), builtin, "gradients only, cv_order 1")
    with pytest.raises(ValueError, match="hess_terms"):
        tallmc.sample(model, tallmc.HmcEcs(cv_order=2), progress=False)


def test_dict_data_and_finite_difference_gradients(logistic_data, builtin):
    X, y = logistic_data

    def terms(theta, batch):
        eta = batch["X"] @ theta
        return batch["y"] * eta - np.logaddexp(0.0, eta)

    model = tallmc.CustomModel(terms, {"X": X, "y": y}, dim=P)
    idata = tallmc.sample(model, tallmc.Nuts(), chains=4, warmup=500, draws=1000, seed=9,
                          progress=False)
    assert_agree(summary(idata, "theta"), builtin, "finite-difference gradients")


def test_an_exception_in_the_users_function_reaches_the_caller_with_its_traceback(
        logistic_data):
    X, y = logistic_data
    calls = {"n": 0}

    def flaky_terms(theta, batch):
        calls["n"] += 1
        if calls["n"] > 30:
            raise KeyError("a bug in the user's model")
        return log_terms(theta, batch)

    model = tallmc.CustomModel(flaky_terms, (X, y), dim=P, grad_terms=grad_terms)
    with pytest.raises(KeyError, match="a bug in the user's model") as info:
        tallmc.sample(model, tallmc.Nuts(), chains=2, warmup=200, draws=200, progress=False)
    frames = "".join(traceback.format_tb(info.value.__traceback__))
    assert "flaky_terms" in frames


def test_wrong_shapes_and_arguments_are_clear_errors(logistic_data):
    X, y = logistic_data
    wrong = tallmc.CustomModel(lambda t, b: np.zeros(3), (X, y), dim=P)
    with pytest.raises(ValueError, match=r"log_terms returned an array of shape \(3,\)"):
        tallmc.sample(wrong, tallmc.Nuts(), progress=False)
    with pytest.raises(ValueError, match="dim"):
        tallmc.CustomModel(log_terms, (X, y), dim=0)
    with pytest.raises(ValueError, match="one name per parameter"):
        tallmc.CustomModel(log_terms, (X, y), dim=P, names=["a"])
    with pytest.raises(ValueError, match="same number of rows"):
        tallmc.CustomModel(log_terms, (X, y[:10]), dim=P)
    with pytest.raises(TypeError, match="function"):
        tallmc.CustomModel(log_terms, (X, y), dim=P, grad_terms=3)
    with pytest.raises(ValueError, match="NormalPrior sd"):
        tallmc.CustomModel(log_terms, (X, y), dim=P, prior=tallmc.NormalPrior(sd=[1.0, 2.0]))


def test_samplers_that_need_bounds_refuse(logistic_data):
    X, y = logistic_data
    model = tallmc.CustomModel(log_terms, (X, y), dim=P, grad_terms=grad_terms)
    with pytest.raises(ValueError, match="bound"):
        tallmc.sample(model, tallmc.Confidence(), chains=1, warmup=10, draws=10,
                      progress=False)


def test_non_finite_terms_are_rejections():
    """A truncated normal: ℓ = −θ²/(2n) per row (the n rows sum to −θ²/2) and −∞ beyond
    θ = 0.5; with a flat-ish prior the posterior is N(0, 1) truncated to (−∞, 0.5]."""
    n = 50
    data = np.zeros(n)

    def terms(theta, batch):
        v = np.full(len(batch), -0.5 * theta[0] ** 2 / n)
        return v if theta[0] <= 0.5 else np.full(len(batch), -np.inf)

    def grads(theta, batch):
        return np.full((len(batch), 1), -theta[0] / n)

    model = tallmc.CustomModel(terms, data, dim=1, grad_terms=grads,
                               prior=tallmc.NormalPrior(0.0, 1e4))
    idata = tallmc.sample(model, tallmc.Nuts(), chains=4, warmup=500, draws=2000, seed=2,
                          init="mode", progress=False)
    draws = idata.posterior["theta"].values.ravel()
    assert draws.max() <= 0.5
    # Truncated N(0, 1) at b = 0.5: mean −φ(b)/Φ(b).
    from math import erf, exp, pi, sqrt
    b = 0.5
    mean = -exp(-b * b / 2) / sqrt(2 * pi) / (0.5 * (1 + erf(b / sqrt(2))))
    s = az.summary(idata, round_to="none")
    assert abs(s["mean"].iloc[0] - mean) < 4 * s["mcse_mean"].iloc[0], (s, mean)


def test_from_jax_logistic_agrees_with_the_builtin_model(logistic_data, builtin):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def log_term(theta, row):
        x, y = row
        eta = jnp.dot(x, theta)
        return y * eta - jnp.logaddexp(0.0, eta)

    X, y = logistic_data
    model = tallmc.CustomModel.from_jax(log_term, (X, y), dim=P)
    assert jax.config.jax_enable_x64
    for sampler in (tallmc.HmcEcs(), tallmc.Nuts()):
        idata = tallmc.sample(model, sampler, chains=4, warmup=500, draws=1000, seed=4,
                              progress=False)
        assert_agree(summary(idata, "theta"), builtin, f"from_jax {sampler!r}")
