"""Formulas (`tallmc.glm`: formulaic's design matrix and names, the same draws as the design
built by hand), offsets and exposures (a column by name or an array), and the probit, Poisson,
negative binomial and robust families: their parameters' names, a loose check that the
posterior is near the truth (the rigorous statistical tests are the Rust library's), and the
library's refusals reaching Python as ValueError."""

import json
from math import erf

import numpy as np
import pytest

import tallmc

pd = pytest.importorskip("pandas")
try:
    import formulaic  # noqa: F401
except ImportError:
    formulaic = None

#: tallmc.glm needs the optional formulaic (pip install formulaic).
needs_formulaic = pytest.mark.skipif(formulaic is None, reason="formulaic is not installed")

#: A posterior mean must be within this many posterior sds of the truth (loose sanity only).
SDS = 4.0


def nuts(model, draws=150, seed=3):
    return tallmc.sample(model, tallmc.Nuts(), chains=2, warmup=150, draws=draws, seed=seed,
                         progress=False)


def parameter_names(idata):
    return json.loads(idata.attrs["tallmc_summary"])["parameter_names"]


def regions(n=1500, seed=7):
    """Columns y (0/1), x and a categorical region (east, north, south) of a logistic model."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["east", "north", "south"], n)
    x = rng.normal(size=n)
    eta = 0.3 + x + 0.5 * (region == "north") - 0.5 * (region == "south")
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(np.float64)
    return pd.DataFrame({"y": y, "x": x, "region": region})


def counts(n=1500, seed=9, phi=None):
    """Columns y (counts), x1, x2 and an exposure t ∈ [0.5, 2]: μ = t exp(0.2 + 0.5 x1 − 0.3 x2),
    Poisson, or negative binomial with dispersion ``phi`` (a gamma–Poisson mixture)."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    t = rng.uniform(0.5, 2.0, size=n)
    mu = t * np.exp(0.2 + 0.5 * x1 - 0.3 * x2)
    rate = mu if phi is None else rng.gamma(phi, mu / phi)
    y = rng.poisson(rate).astype(np.float64)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "t": t})


def assert_near(idata, truth):
    """Every parameter's posterior mean within SDS posterior sds of ``truth`` (name → value)."""
    post = idata.posterior
    for name, value in truth.items():
        draws = (post["beta"].sel(coefficient=name) if name in post["coefficient"].values
                 else post[name]).values
        mean, sd = draws.mean(), draws.std()
        assert abs(mean - value) < SDS * sd, f"{name}: mean {mean:.3f} ± {sd:.3f}, truth {value}"


# --- formulas ------------------------------------------------------------------------------

@needs_formulaic
def test_a_formula_names_the_parameters_and_gives_the_draws_of_the_design_built_by_hand():
    df = regions()
    model = tallmc.glm("y ~ x + C(region)", df, family="logistic")
    assert isinstance(model, tallmc.LogisticRegression) and model.intercept
    by_formula = nuts(model)
    names = ["intercept", "x", "C(region)[T.north]", "C(region)[T.south]"]
    assert parameter_names(by_formula) == names
    assert list(by_formula.posterior["coefficient"].values) == names
    # Treatment coding by hand: east is the reference level.
    hand = pd.DataFrame({"x": df["x"],
                         "C(region)[T.north]": (df["region"] == "north").astype(np.float64),
                         "C(region)[T.south]": (df["region"] == "south").astype(np.float64)})
    by_hand = nuts(tallmc.LogisticRegression(hand, df["y"]))
    np.testing.assert_array_equal(by_formula.posterior["beta"].values,
                                  by_hand.posterior["beta"].values)


@needs_formulaic
def test_polars_data_give_the_model_of_pandas_data():
    pl = pytest.importorskip("polars")
    df = regions(200)
    from_pandas = tallmc.glm("y ~ x + C(region)", df)
    from_polars = tallmc.glm("y ~ x + C(region)", pl.from_pandas(df))
    assert from_polars.names == from_pandas.names
    assert from_polars.spec() == from_pandas.spec()
    np.testing.assert_array_equal(from_polars.X, from_pandas.X)
    np.testing.assert_array_equal(from_polars.y, from_pandas.y)
    assert "polars.DataFrame" in from_polars.label
    assert from_polars.X.flags["C_CONTIGUOUS"] and from_polars.X.dtype == np.float64


@needs_formulaic
def test_a_formula_without_an_intercept_gives_a_model_without_one():
    df = regions(200)
    for formula in ("y ~ 0 + x", "y ~ x - 1"):
        model = tallmc.glm(formula, df, family="linear", prior_sd=5.0)
        assert isinstance(model, tallmc.LinearRegression)
        assert not model.intercept and model.names == ["x"] and model.prior_sd == 5.0
    full = tallmc.glm("y ~ 0 + C(region)", df)  # every level coded when there is no intercept
    assert not full.intercept
    assert full.names == ["C(region)[east]", "C(region)[north]", "C(region)[south]"]


@needs_formulaic
def test_formula_errors_are_clear():
    df = regions(100)
    with pytest.raises(ValueError, match=r"family = 'gaussian': expected one of 'logistic', "
                                         r"'probit', 'poisson', 'negative-binomial', 'robust', "
                                         r"'linear'"):
        tallmc.glm("y ~ x", df, family="gaussian")
    with pytest.raises(ValueError, match="no response"):
        tallmc.glm("~ x", df)
    with pytest.raises(TypeError, match="the formula decides"):
        tallmc.glm("y ~ x", df, intercept=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nu'"):
        tallmc.glm("y ~ x", df, family="logistic", nu=3.0)
    missing = df.assign(x=df["x"].where(df.index != 5))
    with pytest.raises(ValueError, match="null"):  # no row is silently dropped
        tallmc.glm("y ~ x", missing)


# --- offsets and exposures -----------------------------------------------------------------

@needs_formulaic
def test_an_offset_or_exposure_column_is_named_in_the_spec_and_an_array_is_appended():
    df = counts(100)
    by_name = tallmc.PoissonRegression(df[["x1", "x2", "t"]], df["y"], exposure="t")
    assert by_name.names == ["x1", "x2", "t"]
    assert by_name.spec() == {"family": "poisson", "prior_sd": 10.0, "intercept": True,
                              "standardize": False, "offset": None, "exposure": "t"}
    as_array = tallmc.NegativeBinomialRegression(df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(),
                                                 offset=np.log(df["t"]))
    assert as_array.names == ["x0", "x1", "offset"]
    assert as_array.spec()["offset"] == "offset" and as_array.spec()["exposure"] is None
    np.testing.assert_array_equal(as_array.X[:, 2], np.log(df["t"]))
    np.testing.assert_array_equal(as_array.X[:, :2], df[["x1", "x2"]].to_numpy())
    assert tallmc.PoissonRegression(df[["x1"]], df["y"]).spec()["offset"] is None
    # Through a formula: a column of the data that is not a term, or an array.
    named = tallmc.glm("y ~ x1 + x2", df, family="poisson", exposure="t")
    assert named.names == ["x1", "x2", "t"] and named.spec()["exposure"] == "t"
    np.testing.assert_array_equal(named.X, by_name.X)
    array = tallmc.glm("y ~ x1", df, family="negative-binomial", offset=np.log(df["t"]).to_list())
    assert array.names == ["x1", "offset"] and array.spec()["offset"] == "offset"


@needs_formulaic
def test_offset_and_exposure_errors_are_clear():
    df = counts(100)
    X, y = df[["x1", "x2"]], df["y"]
    with pytest.raises(ValueError, match="already has a column named 'offset'"):
        tallmc.PoissonRegression(X.assign(offset=0.0), y, offset=np.zeros(100))
    with pytest.raises(ValueError, match=r"exposure has shape \(99,\); expected one number per "
                                         r"row of the data, \(100,\)"):
        tallmc.PoissonRegression(X, y, exposure=np.ones(99))
    with pytest.raises(ValueError, match="offset and exposure are both given"):
        tallmc.NegativeBinomialRegression(df, "y", offset="t", exposure="t")
    with pytest.raises(ValueError, match=r"exposure = 'time': no such column"):
        tallmc.PoissonRegression(df, "y", exposure="time")
    with pytest.raises(TypeError, match="X is not a DataFrame"):
        tallmc.PoissonRegression(X.to_numpy(), y.to_numpy(), exposure="t")
    with pytest.raises(ValueError, match="also a column of the formula's design matrix"):
        tallmc.glm("y ~ x1 + t", df, family="poisson", exposure="t")
    with pytest.raises(ValueError, match="no such column in the data"):
        tallmc.glm("y ~ x1", df, family="poisson", offset="log_t")
    with pytest.raises(ValueError, match="expected one number per row"):
        tallmc.glm("y ~ x1", df, family="poisson", offset=np.zeros(3))


# --- the four families (need the library's GLM families) -----------------------------------

def test_probit_regression():
    rng = np.random.default_rng(4)
    n = 1500
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    phi = np.vectorize(lambda z: 0.5 * (1 + erf(z / np.sqrt(2))))
    y = (rng.random(n) < phi(0.3 + 0.8 * X["a"] - 0.5 * X["b"])).astype(np.float64)
    idata = nuts(tallmc.ProbitRegression(X, y))
    assert parameter_names(idata) == ["intercept", "a", "b"]
    assert_near(idata, {"intercept": 0.3, "a": 0.8, "b": -0.5})


@needs_formulaic
def test_poisson_regression_with_an_exposure_by_name_array_or_formula():
    df = counts()
    by_name = nuts(tallmc.PoissonRegression(df[["x1", "x2", "t"]], df["y"], exposure="t"))
    assert parameter_names(by_name) == ["intercept", "x1", "x2"]  # the exposure has no coefficient
    assert_near(by_name, {"intercept": 0.2, "x1": 0.5, "x2": -0.3})
    as_array = nuts(tallmc.PoissonRegression(df[["x1", "x2"]], df["y"], exposure=df["t"]))
    by_formula = nuts(tallmc.glm("y ~ x1 + x2", df, family="poisson", exposure="t"))
    as_offset = nuts(tallmc.PoissonRegression(df[["x1", "x2"]], df["y"], offset=np.log(df["t"])))
    for other in (as_array, by_formula, as_offset):
        assert parameter_names(other) == ["intercept", "x1", "x2"]
    for same in (as_array, by_formula):
        np.testing.assert_array_equal(same.posterior["beta"].values,
                                      by_name.posterior["beta"].values)
    # log t added as is: the same posterior as the exposure t (up to rounding in log).
    assert_near(as_offset, {"intercept": 0.2, "x1": 0.5, "x2": -0.3})


@needs_formulaic
def test_negative_binomial_regression_ends_with_log_phi():
    df = counts(phi=3.0, seed=12)
    idata = nuts(tallmc.glm("y ~ x1 + x2", df, family="negative-binomial", exposure="t"))
    assert parameter_names(idata) == ["intercept", "x1", "x2", "log_phi"]
    assert list(idata.posterior["coefficient"].values) == ["intercept", "x1", "x2"]
    assert_near(idata, {"intercept": 0.2, "x1": 0.5, "x2": -0.3, "log_phi": np.log(3.0)})


@needs_formulaic
def test_robust_regression_ends_with_log_sigma():
    rng = np.random.default_rng(6)
    n = 1500
    x = rng.normal(size=n)
    y = 1.0 + 2.0 * x + 0.5 * rng.standard_t(4, size=n)
    df = pd.DataFrame({"y": y, "x": x})
    idata = nuts(tallmc.glm("y ~ x", df, family="robust", nu=4.0))
    assert parameter_names(idata) == ["intercept", "x", "log_sigma"]
    assert json.loads(idata.attrs["tallmc_run"])["model"]["nu"] == 4.0
    assert_near(idata, {"intercept": 1.0, "x": 2.0, "log_sigma": np.log(0.5)})


def test_the_library_refusals_reach_python_as_value_errors():
    df = counts(200)
    X, y = df[["x1", "x2"]], df["y"]
    short = dict(chains=1, warmup=10, draws=10, progress=False)
    # The confidence sampler needs a bound on the log-likelihood's differences.
    with pytest.raises(ValueError, match="bound"):
        tallmc.sample(tallmc.PoissonRegression(X, y), tallmc.Confidence(), **short)
    with pytest.raises(ValueError, match=r"nu -1: expected degrees of freedom"):
        tallmc.sample(tallmc.RobustRegression(X, y, nu=-1.0), tallmc.Nuts(), **short)
    with pytest.raises(ValueError, match=r"exposure .*expected values > 0"):
        tallmc.sample(tallmc.PoissonRegression(X, y, exposure=np.zeros(200)), tallmc.Nuts(),
                      **short)
    with pytest.raises(ValueError, match=r"y = -0.5; expected a count"):
        tallmc.sample(tallmc.PoissonRegression(X, y - 0.5), tallmc.Nuts(), **short)
