"""Models built from NumPy arrays: the `tallmc` command's models (`--model logistic`, `linear`,
`gaussian`, `gaussian-mean`) with the same priors and defaults, except that the regressions
add an intercept unless told not to.

The arrays are read in place, never copied: they must be float64 and C-contiguous (a plain
`np.asarray(..., dtype=np.float64)`, an `np.memmap`, or `np.load(path, mmap_mode="r")` of a
file `np.save` wrote). Anything else raises `TypeError` saying how to convert. Do not write to
an array while a run reads it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Model", "LogisticRegression", "LinearRegression", "Gaussian", "GaussianMean"]


def _number(name: str, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} = {value!r}: expected a number")
    return repr(float(value))


class Model:
    """A model and its data; pass it to :func:`tallmc.sample`.

    Attributes ``X`` (covariates, n × p, or ``None``) and ``y`` (responses, n) are the arrays
    given, unchanged.
    """

    #: The command's ``--model`` value.
    kind: str = ""

    def __init__(self, X, y):
        self.X = X
        self.y = y

    def flags(self) -> list[str]:
        """The command-line flags of the model's settings."""
        return ["--model", self.kind]

    @property
    def num_rows(self) -> int:
        """Number of observations n."""
        return len(self.y)

    def __repr__(self) -> str:
        shape = "" if self.X is None else f"X {tuple(np.shape(self.X))}, "
        return f"{type(self).__name__}({shape}y ({len(self.y)},))"


class _Regression(Model):
    def __init__(self, X, y, prior_sd: float = 10.0, intercept: bool = True,
                 standardize: bool = False):
        super().__init__(X, y)
        self.prior_sd = prior_sd
        self.intercept = bool(intercept)
        self.standardize = bool(standardize)
        _number("prior_sd", prior_sd)

    def flags(self) -> list[str]:
        out = super().flags() + ["--prior-sd", _number("prior_sd", self.prior_sd)]
        if self.intercept:
            out.append("--intercept")
        if self.standardize:
            out.append("--standardize")
        return out

    @classmethod
    def from_npy(cls, x_path, y_path, **settings):
        """The model on two ``.npy`` files, memory-mapped (``np.load(..., mmap_mode="r")``):
        nothing is read into memory until sampling touches it."""
        X = np.load(x_path, mmap_mode="r")
        y = np.load(y_path, mmap_mode="r")
        return cls(X, y, **settings)


class LogisticRegression(_Regression):
    """Bayesian logistic regression: y_i ∈ {0, 1}, P(y_i = 1) = 1 / (1 + exp(−x_iᵀθ)), prior
    θ ~ N(0, prior_sd² I). With ``intercept`` (default) a column of ones is prepended; with
    ``standardize`` every covariate column is centred and scaled (the draws are then on the
    standardized scale, as the command's)."""

    kind = "logistic"


class LinearRegression(_Regression):
    """Bayesian linear regression with unknown noise: y_i ~ N(x_iᵀβ, σ²), parameters
    (β, log σ), prior β ~ N(0, prior_sd² I) and a flat prior on log σ."""

    kind = "linear"


class Gaussian(Model):
    """y_i ~ N(μ, σ²) with unknown μ and log σ, flat priors (the command's ``--model
    gaussian``)."""

    kind = "gaussian"

    def __init__(self, y):
        super().__init__(None, y)


class GaussianMean(Model):
    """y_i ~ N(μ, sigma²) with known ``sigma``, prior μ ~ N(prior_mean, prior_sd²): the
    conjugate model, whose posterior is known in closed form."""

    kind = "gaussian-mean"

    def __init__(self, y, sigma: float, prior_mean: float = 0.0, prior_sd: float = 10.0):
        super().__init__(None, y)
        self.sigma = sigma
        self.prior_mean = prior_mean
        self.prior_sd = prior_sd
        for name in ("sigma", "prior_mean", "prior_sd"):
            _number(name, getattr(self, name))

    def flags(self) -> list[str]:
        return super().flags() + [
            "--sigma", _number("sigma", self.sigma),
            "--prior-mean", _number("prior_mean", self.prior_mean),
            "--prior-sd", _number("prior_sd", self.prior_sd),
        ]
