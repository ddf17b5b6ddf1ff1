"""The coordinates of the full-data BPS and Zig-Zag: ``frame`` as for ``ZigzagCv``."""

import inspect
import json

import pytest

import tallmc
from conftest import logistic_data


def test_bps_and_zigzag_take_a_frame_as_zigzag_cv_does():
    for cls in (tallmc.Bps, tallmc.Zigzag, tallmc.ZigzagCv):
        assert "frame" in inspect.signature(cls).parameters, cls
        assert cls(frame="original").spec()["frame"] == "original"
        assert "frame" not in cls().spec()
        with pytest.raises(ValueError, match="expected one of whitened, original"):
            cls(frame="sideways")


def test_the_envelope_runs_whitened_by_default_and_reports_theta():
    X, y = logistic_data(1_000, 3, 29)
    model = tallmc.LogisticRegression(X, y)
    for frame in (None, "whitened", "original"):
        sampler = tallmc.Zigzag(rate_bound="envelope", frame=frame)
        idata = tallmc.sample(model, sampler, chains=2, warmup=50, draws=300, seed=3,
                              progress=False)
        s = json.loads(idata.attrs["tallmc_summary"])
        whitened = frame != "original"
        assert (s["grid_step"] == 1.0) == whitened, (frame, s["grid_step"])
        assert ("coordinates" in s["tuning"][0]) == whitened, s["tuning"][0]
        # The draws are in θ either way: the means are near the Laplace mode.
        for c, mode in zip(s["continuous_time"], s["laplace_mode"]):
            assert abs(c["mean"] - mode) < 0.5 * c["sd"], (frame, c, mode)
    # With the model's curvature bound (logistic's default) the process runs in θ.
    with pytest.raises(ValueError, match="rate_bound envelope"):
        tallmc.sample(model, tallmc.Bps(frame="whitened"), chains=1, warmup=10, draws=10,
                      progress=False)


def test_the_subsampling_samplers_take_a_frame_too():
    for cls in (tallmc.Sbps, tallmc.Psbps, tallmc.Lipsbps, tallmc.ZigzagSs):
        assert "frame" in inspect.signature(cls).parameters, cls
        assert cls(frame="original").spec()["frame"] == "original"
        assert cls(frame="whitened").spec()["frame"] == "whitened"
        assert "frame" not in cls().spec()
        with pytest.raises(ValueError, match="expected one of whitened, original"):
            cls(frame="sideways")


def test_lipsbps_runs_in_theta_by_default_and_whitened_when_asked_on_logistic():
    X, y = logistic_data(1_000, 3, 29)
    model = tallmc.LogisticRegression(X, y)
    for frame in (None, "whitened"):
        idata = tallmc.sample(model, tallmc.Lipsbps(frame=frame), chains=2, warmup=50,
                              draws=300, seed=3, progress=False)
        s = json.loads(idata.attrs["tallmc_summary"])
        whitened = frame == "whitened"
        assert (s["grid_step"] == 1.0) == whitened, (frame, s["grid_step"])
        assert ("coordinates" in s["tuning"][0]) == whitened, s["tuning"][0]
        assert s["events"]["violations"] == 0
        # A gross check (a wrong map to θ would be many sds off); lipSBPS mixes diffusively,
        # so these short runs are too noisy for MCSE-based tolerances (the Rust tests apply
        # them: pdmp_whitened_subsampled.rs).
        for c, mode in zip(s["continuous_time"], s["laplace_mode"]):
            assert abs(c["mean"] - mode) < 1.5 * c["sd"], (frame, c, mode)
