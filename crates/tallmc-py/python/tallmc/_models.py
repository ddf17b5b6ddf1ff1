"""Models: the data (NumPy arrays, memory-mapped files, pandas / polars DataFrames, pyarrow
Tables, RecordBatches and Datasets, :func:`tallmc.read_parquet`'s :class:`tallmc.Data`) and
the model's settings, which become the run's ``model`` part.

Column names name the parameters: a DataFrame's or table's columns (``intercept``, ``age``,
``income``), ``x0, x1, …`` for a plain array. NumPy arrays that are float64 and C-contiguous
are read in place (a memory-mapped file is never copied). A DataFrame or table is copied once
into a row-major float64 array (pandas keeps its columns column-major, polars and Arrow column
by column, and the samplers read rows), unless it already is one; a pyarrow Dataset is first
read into memory as a Table (``to_table()``), then copied so.
"""

from __future__ import annotations

import os

import numpy as np

from . import _arrow, _sharded
from ._parquet import Data

__all__ = [
    "Model", "LogisticRegression", "LinearRegression", "ProbitRegression", "PoissonRegression",
    "NegativeBinomialRegression", "RobustRegression", "Gaussian", "GaussianMean",
]


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} = {value!r}: expected a number")
    return float(value)


def _kind(obj) -> str:
    """``pandas``, ``polars``, ``pyarrow`` or ``""`` by the object's type."""
    module = type(obj).__module__.split(".")[0]
    return module if module in ("pandas", "polars", "pyarrow") else ""


def _not_numbers(frame, label: str) -> ValueError:
    """The error for a DataFrame with a column that is not numbers: the first such column, by
    name and type (as for Arrow columns)."""
    for name in frame.columns:
        try:
            np.asarray(frame[name].to_numpy(), dtype=np.float64)
        except (TypeError, ValueError):
            return _arrow.not_numbers(str(name), frame[name].dtype,
                                      hint=f" (in the {label}; drop it, or code it as numbers)")
    return ValueError(f"the {label} does not convert to float64 numbers")


class _Design:
    """Covariates already as one row-major float64 array with their column names (a formula's
    design matrix: :func:`tallmc.glm`), taken as they are."""

    def __init__(self, values, names, label: str):
        self.values = values
        self.names = names
        self.label = label


def _table(X):
    """Covariates as (array, column names or None, label): NumPy arrays as they are (the
    extension checks them), tables as one row-major float64 array with their column names."""
    if isinstance(X, _Design):
        return X.values, X.names, X.label
    kind = _kind(X)
    if not kind:
        return X, None, "NumPy arrays"
    if kind == "pyarrow":
        return _arrow_table(X, _arrow.label(X))
    if kind == "pandas":
        import pandas as pd

        if isinstance(X, pd.Series):
            raise TypeError("X is a pandas Series; expected a DataFrame of covariates "
                            "(X.to_frame()) or a 2-D array")
        label = "pandas.DataFrame"
        convert = lambda: X.to_numpy(dtype=np.float64)  # noqa: E731
    else:  # polars
        label = "polars.DataFrame"
        convert = lambda: np.ascontiguousarray(X.to_numpy(), dtype=np.float64)  # noqa: E731
    names = [str(c) for c in X.columns]
    try:
        values = convert()
    except (TypeError, ValueError):
        raise _not_numbers(X, label) from None
    # Zero copy when the table already is a C-contiguous float64 array; else one copy.
    values = np.ascontiguousarray(values, dtype=np.float64)
    return values, names, label


def _arrow_table(X, label: str, leave_out=None):
    """A pyarrow Table, RecordBatch or Dataset (read with ``to_table()``) as (one row-major
    float64 array, column names, label), without the column at ``leave_out``."""
    table = _arrow.as_table(X)
    names = list(table.schema.names)
    keep = [j for j in range(len(names)) if j != leave_out]
    return _arrow.columns(table, keep), [names[j] for j in keep], label


def _column(y, what: str = "y"):
    """A response column as a 1-D array: NumPy arrays as they are, Series and Arrow arrays as
    float64 (a copy only when they are not already float64; Arrow arrays converted exactly,
    nulls an error), :class:`tallmc.Data`'s response."""
    if isinstance(y, Data):
        return y.y
    kind = _kind(y)
    if not kind:
        return y
    if kind == "pyarrow":
        if not _arrow.is_array(y):  # a Table, RecordBatch or Dataset: not one column
            raise TypeError(f"{what} is a {_arrow.label(y)}; expected one column (an array, "
                            "a Series, a pyarrow array) or the name of a column of X")
        return _arrow.column(y, what)
    y = y.to_numpy()  # pandas and polars Series
    return np.ascontiguousarray(y, dtype=np.float64)


def _response_only(y):
    """(responses, None for the names, label, source) of a model without covariates: its
    ``y`` is an array, a Series, or :class:`tallmc.Data` (its response)."""
    if isinstance(y, Data):
        return y.y, None, y.label, y.source()
    return _column(y), None, "NumPy arrays", None


def _split(X, y):
    """(covariates, response, column names, label, source), taking ``y`` out of ``X`` when it
    names one of its columns; ``source`` is :class:`tallmc.Data`'s file, the data left on a
    cluster (:class:`tallmc._sharded.Sharded`: X and y are then None), else None."""
    sharded = _sharded.describe(X, y)
    if sharded is not None:  # a Dask DataFrame or Parquet files: left where they are
        return None, None, sharded.names, sharded.label, sharded
    if isinstance(X, (str, os.PathLike)):
        raise TypeError(f"X is a path ({os.fspath(X)!r}); read it with tallmc.read_parquet(path, "
                        "y=...) to sample here, or pass tallmc.parquet_files(path) — a list of "
                        "files — to leave the data on a Dask cluster (engine=tallmc.dask.Engine)")
    if isinstance(X, Data):
        if y is not None and not (isinstance(y, str) and y == X.response):
            raise TypeError(f"y = {y!r}, but X is tallmc.Data read with its response "
                            f"{X.response!r}; leave y out (or read the file again with "
                            f"tallmc.read_parquet(..., y=...))")
        return X.X, X.y, list(X.names), X.label, X.source()
    if y is None:
        raise TypeError("y is missing: expected the responses (an array, a Series, or the "
                        "name of a column of X); only tallmc.read_parquet's data carry them")
    if isinstance(y, str):
        kind = _kind(X)
        if not kind:
            raise TypeError(f"y = {y!r} names a column, but X is not a DataFrame or table; "
                            "pass the responses as an array")
        if kind == "pyarrow":
            label = _arrow.label(X)
            X = _arrow.as_table(X)  # a Dataset is read once, here
            columns = list(X.schema.names)
        else:
            columns = list(X.columns)
        if y not in columns:
            raise ValueError(f"y = {y!r}: no such column; the columns are {columns}")
        if kind == "pandas":
            response, X = X[y], X.drop(columns=[y])
        elif kind == "polars":
            response, X = X.get_column(y), X.drop(y)
        else:
            at = columns.index(y)
            values, names, label = _arrow_table(X, label, leave_out=at)
            return values, _arrow.column(X.column(at), y), names, label, None
        y = response
    X, names, label = _table(X)
    return X, _column(y), names, label, None


class Model:
    """A model and its data; pass it to :func:`tallmc.sample`.

    Attributes: ``X`` (covariates as the sampler reads them, n × p, or ``None``), ``y``
    (responses, n), ``names`` (the covariates' names, or ``None`` for x0, x1, …), ``label``
    (what the data were), ``source`` (the file the data were read from, as the run records
    it, for :func:`tallmc.read_parquet`'s data; else ``None``), ``sharded`` (data left on a
    cluster — a Dask DataFrame or Parquet files, read by :class:`tallmc.dask.Engine`'s
    workers; ``X`` and ``y`` are then ``None``; else ``None``).
    """

    #: The family's name: the command's ``--model`` value.
    family: str = ""

    def __init__(self, X, y, names=None, label="NumPy arrays", source=None):
        self.X = X
        self.y = y
        self.names = names
        self.label = label
        self.sharded = source if isinstance(source, _sharded.Sharded) else None
        self.source = None if self.sharded is not None else source

    def spec(self) -> dict:
        """The model's part of the run (the JSON form of the library's model settings)."""
        return {"family": self.family}

    def data_spec(self) -> dict:
        """The run's data part: the file the data were read from (so that ``tallmc repeat``
        reads it again), else arrays handed over in memory, named by ``label``."""
        if self.source is not None:
            return dict(self.source)
        return {"kind": "arrays", "label": self.label}

    @property
    def num_rows(self) -> int:
        """Number of observations n (data on a cluster: ``TypeError``, the workers count them)."""
        if self.sharded is not None:
            raise TypeError("the model's data are on a cluster: their rows are counted by the "
                            "workers (tallmc.dask.Engine(client).persist(model.sharded))")
        return len(self.y)

    def __repr__(self) -> str:
        if self.sharded is not None:
            return f"{type(self).__name__}({self.sharded!r})"
        shape = "" if self.X is None else f"X {tuple(np.shape(self.X))}, "
        return f"{type(self).__name__}({shape}y ({len(self.y)},))"


class _Regression(Model):
    def __init__(self, X, y=None, prior_sd: float = 10.0, intercept: bool = True,
                 standardize: bool = False):
        shards = [rows for _, rows in X.shards] if isinstance(X, Data) else None
        X, y, names, label, source = _split(X, y)
        super().__init__(X, y, names, label, source)
        # The files' rows, which tallmc.setup reduces over (a run reads them as one).
        self._shard_lengths = shards
        self.prior_sd = _number("prior_sd", prior_sd)
        self.intercept = bool(intercept)
        self.standardize = bool(standardize)

    def spec(self) -> dict:
        return {**super().spec(), "prior_sd": self.prior_sd, "intercept": self.intercept,
                "standardize": self.standardize}

    @classmethod
    def from_npy(cls, x_path, y_path, **settings):
        """The model on two ``.npy`` files, memory-mapped (``np.load(..., mmap_mode="r")``):
        nothing is read into memory until sampling touches it."""
        X = np.load(x_path, mmap_mode="r")
        y = np.load(y_path, mmap_mode="r")
        return cls(X, y, **settings)


class LogisticRegression(_Regression):
    """Bayesian logistic regression: y_i ∈ {0, 1}, P(y_i = 1) = 1 / (1 + exp(−x_iᵀθ)), prior
    θ ~ N(0, prior_sd² I). ``X`` is an array (n × p, parameters ``x0, x1, …``), a pandas or
    polars DataFrame or a pyarrow Table, RecordBatch or Dataset (parameters named after its
    columns); ``y`` an array, a Series, a pyarrow array, or the name of a column of ``X``.
    ``X`` may also be :func:`tallmc.read_parquet`'s data, whose response is read with them
    (``y`` left out). With ``intercept`` (the default, as on the command line) a parameter
    ``intercept`` comes first; with ``standardize`` every covariate column is centred and
    scaled (the draws are then on the standardized scale, as the command's)."""

    family = "logistic"


class LinearRegression(_Regression):
    """Bayesian linear regression with unknown noise: y_i ~ N(x_iᵀβ, σ²), parameters (β,
    log σ), with independent N(0, prior_sd²) priors on every coefficient and on log σ. Data and
    names as for :class:`LogisticRegression`; the last parameter is ``log_sigma``."""

    family = "linear"


class ProbitRegression(_Regression):
    """Bayesian probit regression: y_i ∈ {0, 1}, P(y_i = 1) = Φ(x_iᵀβ) with Φ the standard
    normal distribution function (the probit link), prior β ~ N(0, prior_sd² I). Data, names,
    ``intercept`` and ``standardize`` as for :class:`LogisticRegression`: the parameters are
    the coefficients, ``intercept`` first when there is one."""

    family = "probit"


class _CountRegression(_Regression):
    """A log-link count model with an optional offset or exposure column."""

    def __init__(self, X, y=None, offset=None, exposure=None, prior_sd: float = 10.0,
                 intercept: bool = True, standardize: bool = False):
        super().__init__(X, y, prior_sd, intercept, standardize)
        if offset is not None and exposure is not None:
            raise ValueError("offset and exposure are both given; expected at most one (an "
                             "exposure t is the offset log t)")
        self.offset = self._offset_column("offset", offset)
        self.exposure = self._offset_column("exposure", exposure)

    def _offset_column(self, what: str, column):
        """The name of the column that holds the offset (or exposure): ``column`` when it
        names a column of X; an array of n numbers is appended to X as a column named
        ``what``."""
        if column is None:
            return None
        if isinstance(column, str):
            if self.names is None:
                raise TypeError(f"{what} = {column!r} names a column, but X is not a DataFrame "
                                f"or table; pass the {what} as an array of n numbers")
            if column not in self.names:
                raise ValueError(f"{what} = {column!r}: no such column; the columns are "
                                 f"{self.names}")
            return column
        if self.sharded is not None:
            raise TypeError(f"{what} is a {type(column).__name__}; with data on a cluster it "
                            "names a column of the data")
        try:
            values = np.asarray(_column(column, what), dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{what} is a {type(column).__name__}; expected the name of a "
                            "column of X or an array of n numbers") from None
        n = self.num_rows
        if values.shape != (n,):
            raise ValueError(f"{what} has shape {values.shape}; expected one number per row "
                             f"of the data, ({n},)")
        X = np.asarray(self.X)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"X has shape {X.shape} for {n} responses; expected ({n}, p)")
        names = self.names if self.names is not None else [f"x{j}" for j in range(X.shape[1])]
        if what in names:
            raise ValueError(f"X already has a column named {what!r}, so the {what} array "
                             f"cannot be appended under that name; name the column "
                             f"({what}={what!r}) to use it as the {what}, or rename it")
        with_column = np.empty((n, X.shape[1] + 1))
        with_column[:, :-1] = X
        with_column[:, -1] = values
        self.X = with_column
        self.names = [*names, what]
        self.source = None  # the column is not in the file: the arrays are the data
        return what

    def spec(self) -> dict:
        return {**super().spec(), "offset": self.offset, "exposure": self.exposure}


class PoissonRegression(_CountRegression):
    """Bayesian Poisson regression with the log link: y_i ~ Poisson(μ_i), log μ_i = x_iᵀβ + o_i,
    prior β ~ N(0, prior_sd² I). ``y`` holds counts (non-negative integers).

    ``offset`` gives o_i as is; ``exposure`` gives t_i > 0 (time at risk, population, …) and
    o_i = log t_i, so μ_i is a rate per unit of exposure. At most one of the two; without
    either, o_i = 0. Each is the name of a column of the DataFrame / table ``X`` or an array
    of n numbers (appended to X as a column named ``offset`` / ``exposure``, which X must not
    already have; this copies X once, memory-mapped X included). The column gets no
    coefficient: the parameters are the other columns' coefficients, ``intercept`` first
    when there is one. Data, names, ``intercept`` and ``standardize`` otherwise as for
    :class:`LogisticRegression`."""

    family = "poisson"


class NegativeBinomialRegression(_CountRegression):
    """Bayesian negative binomial (NB2) regression with the log link: y_i ~ NB(μ_i, φ) with
    mean μ_i and variance μ_i + μ_i²/φ, log μ_i = x_iᵀβ + o_i; parameters (β, log φ) with
    independent N(0, prior_sd²) priors on every coefficient and on log φ. The last parameter
    is ``log_phi`` (small φ: overdispersed; φ → ∞: Poisson). ``y`` holds counts; ``offset``
    and ``exposure`` (o_i = log t_i) as for :class:`PoissonRegression`."""

    family = "negative-binomial"


class RobustRegression(_Regression):
    """Bayesian robust linear regression: Student-t noise with ``nu`` degrees of freedom
    (fixed, default 4), y_i = x_iᵀβ + σ ε_i, ε_i ~ t_ν; parameters (β, log σ) with
    independent N(0, prior_sd²) priors on every coefficient and on log σ. Outliers pull the
    fit far less than under :class:`LinearRegression` (ν → ∞ is that model). Data and names
    as for :class:`LogisticRegression`; the last parameter is ``log_sigma``."""

    family = "robust"

    def __init__(self, X, y=None, nu: float = 4.0, prior_sd: float = 10.0,
                 intercept: bool = True, standardize: bool = False):
        super().__init__(X, y, prior_sd, intercept, standardize)
        self.nu = _number("nu", nu)

    def spec(self) -> dict:
        return {**super().spec(), "nu": self.nu}


class Gaussian(Model):
    """y_i ~ N(μ, σ²) with unknown μ and log σ, flat priors (the command's ``--model
    gaussian``): parameters ``mu`` and ``log_sigma``."""

    family = "gaussian"

    def __init__(self, y):
        super().__init__(None, *_response_only(y))


class GaussianMean(Model):
    """y_i ~ N(μ, sigma²) with known ``sigma``, prior μ ~ N(prior_mean, prior_sd²): the
    conjugate model, whose posterior is known in closed form. Parameter ``mu``."""

    family = "gaussian-mean"

    def __init__(self, y, sigma: float, prior_mean: float = 0.0, prior_sd: float = 10.0):
        super().__init__(None, *_response_only(y))
        self.sigma = _number("sigma", sigma)
        self.prior_mean = _number("prior_mean", prior_mean)
        self.prior_sd = _number("prior_sd", prior_sd)

    def spec(self) -> dict:
        return {**super().spec(), "sigma": self.sigma, "prior_mean": self.prior_mean,
                "prior_sd": self.prior_sd}
