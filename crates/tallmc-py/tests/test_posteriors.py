"""Posteriors from Python: the conjugate Gaussian mean against its closed form, and HMC-ECS on a
memory-mapped logistic regression against full-data NUTS, each within 4 Monte Carlo standard
errors (ArviZ's MCSE of the mean; combined as the root sum of squares for two runs). Other seeds
pass too; the seeds are fixed so that CI is reproducible."""

import arviz as az
import numpy as np

import tallmc


def test_gaussian_mean_matches_the_closed_form():
    rng = np.random.default_rng(5)
    y = rng.normal(1.5, 2.0, size=5_000)
    sigma, prior_mean, prior_sd = 2.0, 0.0, 10.0
    model = tallmc.GaussianMean(y, sigma=sigma, prior_mean=prior_mean, prior_sd=prior_sd)
    idata = tallmc.sample(model, tallmc.Nuts(), chains=4, warmup=500, draws=1000, seed=3,
                          progress=False)
    precision = 1 / prior_sd**2 + len(y) / sigma**2
    mean = (prior_mean / prior_sd**2 + y.sum() / sigma**2) / precision
    sd = precision**-0.5
    s = az.summary(idata, var_names=["mu"], round_to="none")
    assert abs(s["mean"].iloc[0] - mean) < 4 * s["mcse_mean"].iloc[0], (s, mean)
    assert abs(s["sd"].iloc[0] - sd) < 4 * s["mcse_sd"].iloc[0], (s, sd)
    assert s["r_hat"].iloc[0] < 1.01


def test_hmc_ecs_on_a_memory_mapped_logistic_regression_agrees_with_nuts(logistic_npy):
    X, y, _ = logistic_npy
    assert isinstance(X, np.memmap)
    model = tallmc.LogisticRegression(X, y, prior_sd=10.0, intercept=False)
    ecs = tallmc.sample(model, tallmc.HmcEcs(subsample=500, blocks=50), chains=2, warmup=500,
                        draws=1500, seed=2, progress=False)
    nuts = tallmc.sample(model, tallmc.Nuts(), chains=2, warmup=500, draws=1500, seed=2,
                         progress=False)
    a = az.summary(ecs, var_names=["beta"], round_to="none")
    b = az.summary(nuts, var_names=["beta"], round_to="none")
    combined = np.sqrt(a["mcse_mean"] ** 2 + b["mcse_mean"] ** 2)
    gap = (a["mean"] - b["mean"]).abs()
    assert (gap < 4 * combined).all(), np.column_stack([a["mean"], b["mean"], combined])
    # HMC-ECS looked at a small part of the data per iteration; NUTS at all of it.
    assert ecs.attrs["data_fraction_per_iteration"] < 0.05
    assert nuts.attrs["data_fraction_per_iteration"] == 1.0
    assert ecs.attrs["evaluations_total"] < nuts.attrs["evaluations_total"]
