"""tallmc: MCMC for Bayesian inference on tall data, from NumPy arrays to ArviZ.

    import numpy as np, arviz as az, tallmc

    X = np.load("X.npy", mmap_mode="r")          # 10⁶ rows, never copied
    y = np.load("y.npy", mmap_mode="r")
    model = tallmc.LogisticRegression(X, y)
    idata = tallmc.sample(model, tallmc.HmcEcs(subsample=1300), chains=4, seed=1)
    print(az.summary(idata))

Models: :class:`LogisticRegression`, :class:`ProbitRegression`, :class:`PoissonRegression`,
:class:`NegativeBinomialRegression` (counts, with an optional ``offset`` or ``exposure``),
:class:`LinearRegression`, :class:`RobustRegression` (Student-t noise), :class:`Gaussian`,
:class:`GaussianMean`. :func:`glm` makes a regression from a formula and a DataFrame
(``tallmc.glm("y ~ age + C(region)", people, family="poisson")``; needs formulaic).
Data: NumPy arrays (memory-mapped ones read in place), pandas / polars DataFrames, pyarrow
Tables, RecordBatches and Datasets; :func:`read_parquet` reads a Parquet file or directory of
shards as the command's ``--data`` does (same rows, same order, same draws; needs pyarrow).
Models of your own: :class:`CustomModel` (per-row log-likelihood terms as NumPy functions,
optionally their gradients and Hessians) and :meth:`CustomModel.from_jax` (one row's
log-likelihood as a JAX function, derivatives derived), with a :class:`NormalPrior`.

Samplers: one class per ``tallmc sample`` subcommand, with its flags as keyword arguments
(``Nuts``, ``Hmc``, ``HmcEcs``, ``HmcEcsSigned``, ``Sgld``, ``Sghmc``, ``Sgnht``,
``Austerity``, ``Confidence``, ``Sbps``, ``Zigzag``, ``ZigzagCv``, …; ``SAMPLERS`` lists
them). :func:`sample` runs one; :func:`read_run` reads a command's output directory.
:func:`setup` gives what a run computes first (the mode, the Laplace covariance, the control
variates' sums), here or on a Dask cluster next to the data's shards (:mod:`tallmc.dask`).

This package is a thin layer over the Rust library: the sampling is the ``tallmc`` command's
code, so the same seed gives the same draws in Python, on the command line and in Rust.
"""

from . import _tallmc
from ._custom import CustomModel, NormalPrior
from ._formula import glm
from ._models import (
    Gaussian, GaussianMean, LinearRegression, LogisticRegression, Model,
    NegativeBinomialRegression, PoissonRegression, ProbitRegression, RobustRegression,
)
from ._parquet import Data, parquet_files, read_parquet
from ._read import read_run
from ._sample import sample
from ._setup import Setup, setup
from ._samplers import SAMPLERS, Sampler

globals().update(SAMPLERS)

__all__ = [
    "Model", "LogisticRegression", "ProbitRegression", "PoissonRegression",
    "NegativeBinomialRegression", "LinearRegression", "RobustRegression", "Gaussian",
    "GaussianMean", "glm", "CustomModel", "NormalPrior", "Sampler", "SAMPLERS", "sample", "read_run",
    "read_parquet", "parquet_files", "Data", "setup", "Setup", *SAMPLERS,
]
