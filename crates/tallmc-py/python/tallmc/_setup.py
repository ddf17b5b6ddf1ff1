"""`tallmc.setup`: what every run computes before its chains — the posterior mode (Newton's
method, warm-started on evenly spaced rows), the Laplace approximation there and the control
variates' sums at the mode — here on the model's arrays, or on a Dask cluster next to the
shards (``engine=tallmc.dask.Engine(client)``), with the same numbers bit for bit over the
same shards."""

from __future__ import annotations

import json

import numpy as np

from ._models import Model
from ._names import pythonic

__all__ = ["setup", "Setup"]


class Setup:
    """The set-up of a run: ``mode`` (θ*, d), ``covariance`` (the Laplace covariance
    (−∇²log π(θ*))⁻¹, d × d), ``names`` (the parameters'), ``log_density`` (log π(θ*) up to its
    constant), ``control_variate`` (``None``, or a dict: ``order``, ``value`` Σℓ_i(θ*),
    ``gradient`` Σ∇ℓ_i(θ*), ``hessian`` Σ∇²ℓ_i(θ*) as d × d, empty below order 2),
    ``newton_iterations``, ``evaluations`` (per-datum terms, gradients, Hessians),
    ``column_moments`` (``None``, or for a model that standardizes, a dict of the covariates'
    ``mean`` and population ``sd`` over all rows, which it divided them by), ``shards`` (the
    passes reduced over), ``rows_on_driver`` (rows this process held) and ``seconds``."""

    def __init__(self, raw: dict):
        d = len(raw["mode"])
        self.names = list(raw["parameter_names"])
        self.mode = np.array(raw["mode"])
        self.covariance = np.array(raw["covariance"]).reshape(d, d)
        self.log_density = raw["log_density"]
        self.newton_iterations = raw["newton_iterations"]
        terms, gradients, hessians = raw["evaluations"]
        self.evaluations = {"terms": terms, "gradients": gradients, "hessians": hessians}
        cv = raw["control_variate"]
        if cv is not None:
            hess = np.array(cv["hessian"])
            cv = {"order": cv["order"], "value": cv["value"], "gradient": np.array(cv["gradient"]),
                  "hessian": hess.reshape(d, d) if hess.size else hess}
        self.control_variate = cv
        moments = raw.get("column_moments")
        self.column_moments = None if moments is None else {
            "mean": np.array(moments["mean"]), "sd": np.array(moments["sd"])}
        self.shards = raw["shards"]
        self.rows_on_driver = raw["rows_on_driver"]
        self.seconds = raw["seconds"]

    @property
    def sds(self):
        """Posterior standard deviations under the Laplace approximation, √diag Σ."""
        return np.sqrt(np.diag(self.covariance))

    def __repr__(self) -> str:
        mode = ", ".join(f"{n}={m:.4g}" for n, m in zip(self.names, self.mode))
        return (f"Setup(mode: {mode}; {self.newton_iterations} Newton iterations over "
                f"{self.shards} shard(s), {self.seconds:.2f} s)")


def setup(model: Model, engine=None, cv_order: int = 2, by_shard: bool = False) -> Setup:
    """The posterior mode, the Laplace covariance there and the control variates' sums at the
    mode (Taylor order ``cv_order``: 0, 1, 2, or ``None`` for none), as every run computes
    them before its chains.

    ``engine=None``: here, on all cores; with ``by_shard=True`` over the data's files one by one
    (:func:`tallmc.read_parquet`'s shards), as a cluster does, else as one block (as a run).
    ``engine=tallmc.dask.Engine(client)``: each
    pass over the data is one task per shard on the cluster, for a model whose data are a Dask
    DataFrame or Parquet files (``tallmc.LogisticRegression(ddf, y="y")``); the shards stay on
    the workers. Over the same shards both give the same numbers, bit for bit. A model with
    ``standardize=True`` gets its covariates' means and sds over all the shards first (two
    more passes)."""
    if not isinstance(model, Model):
        raise TypeError(f"model is a {type(model).__name__}; expected a tallmc model "
                        "(tallmc.LogisticRegression(X, y), …); models of your own have no "
                        "shards to reduce over")
    if cv_order is not None and cv_order not in (0, 1, 2):
        raise ValueError(f"cv_order = {cv_order!r}: expected 0, 1, 2 or None")
    model_json = json.dumps(model.spec())
    from . import _tallmc

    try:
        if model.sharded is not None:
            if engine is None:
                raise ValueError(f"the model's data are on a cluster ({model.sharded.label}); "
                                 "pass engine=tallmc.dask.Engine(client)")
            source, lengths = engine._source(model)
            raw = _tallmc.setup_on_shards(model_json, source, lengths, cv_order)
        else:
            if engine is not None:
                raise ValueError("engine= runs the passes where the data are; this model's "
                                 "data are in memory here: make the model from a Dask "
                                 "DataFrame or Parquet files, or leave engine out")
            lengths = getattr(model, "_shard_lengths", None) if by_shard else None
            if by_shard and lengths is None:
                raise ValueError("by_shard=True: the model's data have no shards (only "
                                 "tallmc.read_parquet's files do)")
            raw = _tallmc.setup_local(model_json, model.X, model.y, model.names, lengths,
                                      cv_order)
    except ValueError as e:
        raise ValueError(pythonic(str(e))) from None
    return Setup(json.loads(raw))
