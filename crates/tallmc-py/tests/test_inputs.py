"""Bad inputs raise the named Python exception with the library's message naming the value;
nothing panics through to Python."""

import numpy as np
import pytest

import tallmc

from conftest import logistic_data


def run(model, sampler=None, **kw):
    kw.setdefault("chains", 1)
    kw.setdefault("warmup", 50)
    kw.setdefault("draws", 50)
    return tallmc.sample(model, sampler or tallmc.Nuts(), progress=False, **kw)


def test_wrong_dtypes_and_layouts_say_how_to_convert():
    X, y = logistic_data(200, 3, 1)
    with pytest.raises(TypeError, match=r"float32.*astype\(np.float64\)"):
        run(tallmc.LogisticRegression(X.astype(np.float32), y))
    with pytest.raises(TypeError, match=r"dtype int64"):
        run(tallmc.LogisticRegression(X, y.astype(np.int64)))
    with pytest.raises(TypeError, match=r"not C-contiguous.*ascontiguousarray"):
        run(tallmc.LogisticRegression(np.asfortranarray(X), y))
    with pytest.raises(TypeError, match=r"not C-contiguous"):
        run(tallmc.LogisticRegression(X[::2], y[::2]))
    with pytest.raises(TypeError, match=r"expected a NumPy array"):
        run(tallmc.LogisticRegression(X.tolist(), y))


def test_wrong_shapes_are_named():
    X, y = logistic_data(200, 3, 1)
    with pytest.raises(ValueError, match=r"X has 1 dimensions .* expected 2-D"):
        run(tallmc.LogisticRegression(X[:, 0].copy(), y))
    with pytest.raises(ValueError, match=r"X has 200 rows but y has 199 values"):
        run(tallmc.LogisticRegression(X, y[:199].copy()))
    with pytest.raises(ValueError, match=r"y has 2 dimensions"):
        run(tallmc.LogisticRegression(X, y.reshape(-1, 1)))
    with pytest.raises(ValueError, match=r"at least one row"):
        run(tallmc.GaussianMean(np.zeros(0), sigma=1.0))


def test_bad_values_in_the_data_are_found():
    X, y = logistic_data(200, 3, 1)
    bad = X.copy()
    bad[17, 2] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value NaN at row 17.*`x2`"):
        run(tallmc.LogisticRegression(bad, y))
    labels = y.copy()
    labels[5] = 2.0
    with pytest.raises(ValueError, match=r"row 5\b.*y = 2; expected 0 or 1"):
        run(tallmc.LogisticRegression(X, labels))


def test_bad_settings_are_named():
    X, y = logistic_data(200, 3, 1)
    model = tallmc.LogisticRegression(X, y)
    with pytest.raises(ValueError, match=r"^subsample 500: expected 1 ≤ m ≤ N = 200 \(the number"):
        run(model, tallmc.HmcEcs(subsample=500))
    with pytest.raises(TypeError, match=r"unexpected setting\(s\) subsampel.*subsample"):
        tallmc.HmcEcs(subsampel=100)
    with pytest.raises(TypeError, match=r"subsample = 'abc': expected a number"):
        tallmc.HmcEcs(subsample="abc")
    # Settings are checked when the sampler is made, by the library's own checks.
    with pytest.raises(ValueError, match=r"^Sgld: step_size -1: expected a finite number > 0$"):
        tallmc.Sgld(step_size=-1.0)
    with pytest.raises(TypeError, match=r"Sgld\(\) needs step_size"):
        tallmc.Sgld()
    with pytest.raises(ValueError, match=r"metric = 'sparse': expected one of laplace, dense, diag"):
        tallmc.Nuts(metric="sparse")
    with pytest.raises(ValueError, match=r"max_depth 12: only meaningful with inner nuts"):
        tallmc.HmcEcs(max_depth=12)
    with pytest.raises(TypeError, match=r"expected True or False"):
        tallmc.Confidence(cv="yes")
    with pytest.raises(ValueError, match=r"chains = 0: expected at least 1"):
        run(model, chains=0)
    with pytest.raises(TypeError, match=r"expected a tallmc sampler"):
        tallmc.sample(model, "nuts")
    with pytest.raises(TypeError, match=r"prior_sd = 'big'"):
        tallmc.LogisticRegression(X, y, prior_sd="big")
    with pytest.raises(ValueError, match=r"prior_sd -1: expected a finite number > 0"):
        run(tallmc.LogisticRegression(X, y, prior_sd=-1.0))


def test_sampler_settings_have_signatures_and_keywords_get_a_trailing_underscore():
    import inspect

    params = inspect.signature(tallmc.HmcEcs).parameters
    assert {"subsample", "blocks", "trajectory_length", "target_accept"} <= set(params)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    # --lambda is a Python keyword: the setting is lambda_.
    assert "lambda_" in inspect.signature(tallmc.HmcEcsSigned).parameters
    assert tallmc.HmcEcsSigned(lambda_=50).spec() == {"name": "hmc-ecs-signed", "lambda": 50}
    with pytest.raises(TypeError, match="lambda_"):
        tallmc.HmcEcsSigned(**{"lambda": 50})
    with pytest.raises(ValueError, match="lambda_ 0: expected at least 1"):
        tallmc.HmcEcsSigned(lambda_=0)
