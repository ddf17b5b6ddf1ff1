"""What `tallmc.sample` returns beyond the posterior: a signed HMC-ECS run's signs and
sign-corrected summary; a continuous-time sampler's grid draws and, on request, its skeleton
(whose rows must lie on one piecewise-linear path); the progress bar drawn where the command's
cannot be (a notebook); and a Rust panic, which reaches Python as a RuntimeError."""

import io
import json

import arviz as az
import numpy as np
import pytest

import tallmc
from tallmc import _progress, _tallmc

from conftest import logistic_data


def gaussian_mean_posterior(y, sigma, prior_mean, prior_sd):
    """Mean and sd of μ's conjugate normal posterior."""
    precision = 1 / prior_sd**2 + len(y) / sigma**2
    return (prior_mean / prior_sd**2 + y.sum() / sigma**2) / precision, precision**-0.5


def test_signed_hmc_ecs_gives_each_draw_a_sign_and_a_sign_corrected_summary():
    X, y = logistic_data(20_000, 3, 21)
    model = tallmc.LogisticRegression(X, y, intercept=False)
    # m = 30 rows in each of λ = 100 factors (the defaults): 15 % of the rows per iteration.
    idata = tallmc.sample(model, tallmc.HmcEcsSigned(), chains=2, warmup=200, draws=400,
                          seed=6, progress=False)
    sign = idata.sample_stats["sign"].values
    assert sign.shape == (2, 400)
    assert set(np.unique(sign)) <= {-1.0, 1.0}
    corrected = json.loads(idata.attrs["tallmc_summary"])["sign_corrected"]
    assert corrected["negative_signs"] == int((sign < 0).sum())
    assert corrected["tau"] == pytest.approx(float((sign > 0).mean()), abs=1e-12)
    names = [p["name"] for p in corrected["parameters"]]
    assert names == ["x0", "x1", "x2"]
    # With only positive signs the sign-corrected mean is the plain mean of the draws.
    if corrected["negative_signs"] == 0:
        plain = idata.posterior["beta"].values.reshape(-1, 3).mean(axis=0)
        got = [p["mean"] for p in corrected["parameters"]]
        np.testing.assert_allclose(got, plain, rtol=1e-12)


def test_zigzag_grid_draws_match_the_closed_form_and_the_skeleton_is_one_linear_path(tmp_path):
    rng = np.random.default_rng(8)
    y = rng.normal(-0.7, 1.5, size=4_000)
    model = tallmc.GaussianMean(y, sigma=1.5, prior_mean=0.0, prior_sd=5.0)
    idata = tallmc.sample(model, tallmc.ZigzagCv(skeleton=True), chains=2, warmup=1000,
                          draws=2000, seed=12, progress=False)
    mean, sd = gaussian_mean_posterior(y, 1.5, 0.0, 5.0)
    s = az.summary(idata, var_names=["mu"], round_to="none")
    assert abs(s["mean"].iloc[0] - mean) < 4 * s["mcse_mean"].iloc[0], (s, mean)
    assert abs(s["sd"].iloc[0] - sd) < 4 * s["mcse_sd"].iloc[0], (s, sd)

    sk = idata.skeleton
    for c in range(2):
        k = int(sk["num_events"][c])
        t = sk["time"].values[c, :k]
        x = sk["mu"].values[c, :k]
        v = sk["v_mu"].values[c, :k]
        events = list(sk["kind"].values[c, :k])
        assert events[0] == "start" and events[-1] == "end"
        assert "flip" in events
        assert np.all(np.diff(t) >= 0)
        # x(t) = x_k + v_k (t - t_k) between rows: each row's position is where the last one's
        # velocity carried it.
        np.testing.assert_allclose(x[1:], x[:-1] + v[:-1] * np.diff(t), rtol=1e-9, atol=1e-9)
        # Zig-Zag moves at unit speed per coordinate of its whitened frame z = (μ − μ*)/σ_L:
        # at speed σ_L in μ, the same at every event.
        np.testing.assert_allclose(np.abs(v), np.abs(v[0]), rtol=1e-12)
        # Padding past the chain's events.
        assert np.all(np.isnan(sk["time"].values[c, k:]))
    assert idata.posterior["mu"].shape == (2, 2000)
    # The skeleton survives a netCDF round trip with the rest.
    idata.to_netcdf(tmp_path / "zz.nc")
    back = az.from_netcdf(tmp_path / "zz.nc")
    np.testing.assert_array_equal(back.skeleton["v_mu"].values, sk["v_mu"].values)
    assert list(back.skeleton["kind"].values[0, :3]) == list(sk["kind"].values[0, :3])


def test_a_panic_in_rust_is_a_runtime_error_not_a_crash():
    with pytest.raises(RuntimeError, match="internal error: a panic raised on purpose"):
        _tallmc._test_job("panic")
    # The interpreter goes on, and so does the library.
    y = np.random.default_rng(1).normal(size=100)
    idata = tallmc.sample(tallmc.GaussianMean(y, sigma=1.0), tallmc.Rwm(), chains=1,
                          warmup=10, draws=20, progress=False)
    assert idata.posterior["mu"].shape == (1, 20)


def test_the_text_bar_counts_iterations_and_estimates_the_time_left():
    now = [0.0]
    out = io.StringIO()
    bar = _progress.TextBar("tallmc nuts", stream=out, clock=lambda: now[0])
    bar("finding the posterior mode", 0, 0)
    assert out.getvalue() == ""  # nothing before SHOW_AFTER seconds
    now[0] = 3.0
    bar("finding the posterior mode · 2.0 passes over 1000 rows", 0, 0)
    assert "setup: finding the posterior mode · 2.0 passes" in out.getvalue()
    now[0] = 6.0
    bar("", 2_000, 8_000)
    last = out.getvalue().split("\r")[-1]
    assert "25%" in last and "2,000/8,000 iterations" in last and "~0:18 left" in last
    now[0] = 6.1
    bar("", 2_100, 8_000)  # too soon to redraw
    assert out.getvalue().split("\r")[-1] == last
    now[0] = 12.0
    bar("", 8_000, 8_000)
    assert "100%" in out.getvalue().split("\r")[-1]
    bar.close()
    assert out.getvalue().endswith("\n")


def test_in_a_notebook_sample_draws_the_text_bar_on_sys_stderr(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "_in_notebook", lambda: True)
    monkeypatch.setattr(_progress, "SHOW_AFTER", 0.0)
    y = np.random.default_rng(2).normal(size=50_000)
    tallmc.sample(tallmc.GaussianMean(y, sigma=1.0), tallmc.Nuts(), chains=2, warmup=300,
                  draws=300, seed=1)
    err = capsys.readouterr().err
    assert "tallmc nuts" in err
    assert "1,200/1,200 iterations" in err.split("\r")[-1]
    monkeypatch.setattr(_progress, "_in_notebook", lambda: True)
    tallmc.sample(tallmc.GaussianMean(y, sigma=1.0), tallmc.Nuts(), chains=2, warmup=300,
                  draws=300, seed=1, progress=False)
    assert capsys.readouterr().err == ""
