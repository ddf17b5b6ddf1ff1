"""Models written in Python: :class:`CustomModel` (per-row log-likelihood terms as NumPy
functions of θ and a batch of rows) and :meth:`CustomModel.from_jax` (one row's log-likelihood
as a JAX function; vectorized, jitted gradients and Hessians derived from it).

The samplers call the functions back on the rows they need (a subsample of m rows for HMC-ECS
and the stochastic-gradient kernels, contiguous chunks for the full-data passes), with the GIL
held only for the call. A batch is the model's data gathered at the rows' indices: the same
structure as ``data`` (a dict of arrays, a tuple of arrays, or one array), each array indexed
along its first axis; its arrays are read-only (a batch may be handed to more than one call).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

__all__ = ["CustomModel", "NormalPrior"]


class NormalPrior:
    """Independent normal priors θ_j ~ N(mean_j, sd_j²); ``mean`` and ``sd`` are numbers or
    arrays of one value per parameter."""

    def __init__(self, mean=0.0, sd=10.0):
        self.mean = mean
        self.sd = sd

    def vectors(self, dim: int):
        """(mean, sd) as lists of ``dim`` floats."""
        out = []
        for what, v in (("mean", self.mean), ("sd", self.sd)):
            a = np.asarray(v, dtype=np.float64)
            if a.ndim == 0:
                a = np.full(dim, float(a))
            if a.shape != (dim,):
                raise ValueError(f"NormalPrior {what} has shape {a.shape}; expected a number "
                                 f"or {dim} values (one per parameter)")
            out.append([float(x) for x in a])
        return out

    def __repr__(self) -> str:
        return f"NormalPrior(mean={self.mean!r}, sd={self.sd!r})"


def _rows_of(data):
    """(number of rows, gather(rows) → batch) for ``data``: a mapping or tuple of arrays, or
    one array, all with the same first dimension."""
    if isinstance(data, Mapping):
        items = {str(k): np.asarray(v) for k, v in data.items()}
        if not items:
            raise ValueError("data is empty; expected at least one array")
        arrays = list(items.items())
        keys = list(items)

        def pack(parts):
            return dict(zip(keys, parts))
    elif isinstance(data, tuple):
        arrays = [(f"data[{k}]", np.asarray(v)) for k, v in enumerate(data)]
        if not arrays:
            raise ValueError("data is an empty tuple; expected at least one array")

        def pack(parts):
            return tuple(parts)
    else:
        arrays = [("data", np.asarray(data))]

        def pack(parts):
            return parts[0]
    for name, a in arrays:
        if a.ndim == 0:
            raise ValueError(f"{name} is a scalar; expected an array with one row per datum")
    n = len(arrays[0][1])
    for name, a in arrays:
        if len(a) != n:
            raise ValueError(f"{name} has {len(a)} rows and {arrays[0][0]} has {n}; expected "
                             "the same number of rows in every array")
    if n == 0:
        raise ValueError("data have no rows; expected at least one")
    return n, _Batches([a for _, a in arrays], pack)


class _Batches:
    """Gathers batches of rows. A contiguous range is a view. Indices are gathered with
    ``np.take`` (twice as fast as fancy indexing on rows), and the last few index batches are
    kept: the samplers ask for the same subsample at every leapfrog step of a trajectory (the
    batch is reused as it is) and for a subsample that differs from the last one in a refreshed
    block (the batch is copied and only the changed positions gathered again). A batch holds
    the same numbers either way; its arrays are read-only, since one may be handed out again."""

    #: How many recent batches are kept (several chains share the model).
    KEEP = 8
    #: Batches larger than this (bytes) are not kept.
    MAX_BYTES = 8 << 20

    def __init__(self, arrays, pack):
        self.arrays = arrays
        self.pack = pack
        self.row_bytes = sum(a[:1].nbytes for a in arrays)
        self.recent = []  # (rows, parts, batch), newest first
        self.lock = threading.Lock()

    def __call__(self, rows):
        if isinstance(rows, slice):
            return self.pack([a[rows] for a in self.arrays])
        rows = np.asarray(rows)
        m = len(rows)
        if m * self.row_bytes > self.MAX_BYTES:
            return self.pack([np.take(a, rows, axis=0) for a in self.arrays])
        with self.lock:
            recent = list(self.recent)
        best, changed = None, None
        for k, entry in enumerate(recent):
            if len(entry[0]) != m:
                continue
            diff = np.flatnonzero(entry[0] != rows)
            if len(diff) == 0:
                if k > 0:
                    with self.lock:  # the newest first, by identity
                        for j, e in enumerate(self.recent):
                            if e is entry:
                                del self.recent[j]
                                self.recent.insert(0, entry)
                                break
                return entry[2]
            if len(diff) <= m // 4:
                best, changed = entry, diff
                break
        if best is not None:
            parts = [p.copy() for p in best[1]]
            at = rows[changed]
            for p, a in zip(parts, self.arrays):
                p[changed] = np.take(a, at, axis=0)
        else:
            parts = [np.take(a, rows, axis=0) for a in self.arrays]
        for p in parts:
            p.flags.writeable = False
        batch = self.pack(parts)
        with self.lock:
            self.recent.insert(0, (rows.copy(), parts, batch))
            del self.recent[self.KEEP:]
        return batch


def _float_array(value, shape, what):
    a = np.asarray(value, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{what} returned an array of shape {a.shape}; expected {shape} "
                         f"(m = {shape[0]} rows of the batch)")
    return np.ascontiguousarray(a).reshape(-1)


class CustomModel:
    """A model of your own: log π(θ) = log p(θ) + Σ_i ℓ_i(θ), with the per-row terms ℓ_i
    written in Python.

    ``log_terms(theta, batch)`` gets θ (a float64 array of ``dim``) and a batch of m rows of
    ``data`` (the same structure: a dict of arrays, a tuple of arrays or one array, gathered at
    the batch's rows) and returns the m values ℓ_i(θ) as an array. ``grad_terms(theta, batch)``
    (optional) returns the m × dim gradients ∇ℓ_i(θ); ``hess_terms(theta, batch)`` (optional)
    the m × dim × dim Hessians. Without ``grad_terms`` gradients are central differences of
    ``log_terms`` (2·dim calls each: slow, but the exact samplers stay exact); without
    ``hess_terms`` Hessians are differences of the gradients, and HMC-ECS and the SG kernels'
    control variates are first order (``cv_order=1``, the default then; 2 is refused).

    ``names``: the parameters' names (default ``theta.1 … theta.dim``, one ArviZ variable
    ``theta``). ``prior``: a :class:`NormalPrior` (default N(0, 10²) on every parameter).

    A Python exception in your function stops the run and is raised by :func:`tallmc.sample`
    with its traceback; a non-finite value is a rejected proposal or a divergence, as for the
    built-in models. Every sampler whose needs the functions meet runs the model; those that
    need bounds (``Confidence``, ``Lipsbps``, ``ZigzagSs``, ``ZigzagCv``) refuse it.

    Example (logistic regression, X an n × p array, y of 0/1)::

        def log_terms(theta, batch):
            X, y = batch
            eta = X @ theta
            return y * eta - np.logaddexp(0.0, eta)

        def grad_terms(theta, batch):
            X, y = batch
            return (y - 1.0 / (1.0 + np.exp(-(X @ theta))))[:, None] * X

        model = tallmc.CustomModel(log_terms, (X, y), dim=p, grad_terms=grad_terms)
        idata = tallmc.sample(model, tallmc.HmcEcs(subsample=1000))
    """

    #: The run's model family.
    family = "custom"

    def __init__(self, log_terms, data, dim: int, names=None, grad_terms=None,
                 hess_terms=None, prior=None, label=None):
        for what, f in (("log_terms", log_terms), ("grad_terms", grad_terms),
                        ("hess_terms", hess_terms)):
            if f is not None and not callable(f):
                raise TypeError(f"{what} is a {type(f).__name__}; expected a function "
                                f"{what}(theta, batch)")
        if log_terms is None:
            raise TypeError("log_terms is required: a function log_terms(theta, batch) "
                            "returning the batch's m values ℓ_i(θ)")
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim = {dim!r}: expected the number of parameters, an integer ≥ 1")
        self.dim = int(dim)
        if names is None:
            names = [f"theta.{j + 1}" for j in range(self.dim)]
        names = [str(n) for n in names]
        if len(names) != self.dim:
            raise ValueError(f"{len(names)} names for dim = {self.dim} parameters; expected "
                             "one name per parameter")
        if len(set(names)) != len(names):
            raise ValueError(f"names {names} repeat a name; expected distinct names")
        self.names = names
        self.num_rows, self._gather = _rows_of(data)
        self.data = data
        self.log_terms = log_terms
        self.grad_terms = grad_terms
        self.hess_terms = hess_terms
        self.prior = NormalPrior() if prior is None else prior
        if not isinstance(self.prior, NormalPrior):
            raise TypeError(f"prior is a {type(self.prior).__name__}; expected "
                            "tallmc.NormalPrior(mean, sd)")
        self.prior_mean, self.prior_sd = self.prior.vectors(self.dim)
        self.label = label or f"CustomModel({getattr(log_terms, '__name__', 'log_terms')})"
        # The batch size a function is called with may be padded (JAX models: to a few sizes,
        # so that jit compiles a handful of programs, not one per batch size).
        self._pad = False

    # The bridge the library calls: kind is "terms", "gradients" or "hessians"; rows a uint32
    # array of row indices or a slice. Returns a tuple of flat float64 arrays.
    def _evaluate(self, kind, theta, rows):
        if isinstance(rows, slice):
            m = rows.stop - rows.start
        else:
            m = len(rows)
        call_rows, keep = rows, m
        if self._pad and m > 0:
            call_rows, keep = _padded(rows, m)
        batch = self._gather(call_rows)
        size = keep if not self._pad else len(_as_indices(call_rows))
        d = self.dim
        if kind == "terms":
            v = _float_array(self.log_terms(theta, batch), (size,), "log_terms")
            return (v[:m],)
        if kind == "gradients":
            v = _float_array(self.log_terms(theta, batch), (size,), "log_terms")
            g = _float_array(self.grad_terms(theta, batch), (size, d), "grad_terms")
            return (v[:m], g[:m * d])
        h = _float_array(self.hess_terms(theta, batch), (size, d, d), "hess_terms")
        return (h[:m * d * d],)

    def spec(self) -> dict:
        """The model's part of the run."""
        return {"family": "custom", "label": self.label}

    def __repr__(self) -> str:
        parts = ["log_terms"] + [k for k in ("grad_terms", "hess_terms")
                                 if getattr(self, k) is not None]
        return f"CustomModel({', '.join(parts)}; dim={self.dim}, n={self.num_rows})"

    @classmethod
    def from_jax(cls, log_term, data, dim: int, names=None, prior=None, hessians: bool = True,
                 label=None):
        """A model from ``log_term(theta, row)``, one row's ℓ_i(θ) as a JAX function (``row``
        has the structure of ``data`` with the row axis removed). Its batched values,
        gradients (``jax.grad``) and, with ``hessians``, Hessians (``jax.hessian``) are
        vectorized with ``jax.vmap`` and compiled with ``jax.jit``; batches are padded to a
        few sizes so that few programs are compiled. Turns on JAX's 64-bit mode
        (``jax_enable_x64``): the samplers work in float64. Needs JAX
        (``pip install "./crates/tallmc-py[jax]"``)."""
        try:
            import jax
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("CustomModel.from_jax needs JAX: pip install jax "
                              "(or the package's extra: pip install \"tallmc[jax]\")") from e
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        values = jax.jit(jax.vmap(log_term, in_axes=(None, 0)))
        grads = jax.jit(jax.vmap(jax.grad(log_term), in_axes=(None, 0)))
        hess = jax.jit(jax.vmap(jax.hessian(log_term), in_axes=(None, 0))) if hessians else None

        def log_terms(theta, batch):
            return np.asarray(values(jnp.asarray(theta), batch))

        def grad_terms(theta, batch):
            return np.asarray(grads(jnp.asarray(theta), batch))

        def hess_terms(theta, batch):
            return np.asarray(hess(jnp.asarray(theta), batch))

        log_terms.__name__ = getattr(log_term, "__name__", "log_term")
        model = cls(log_terms, data, dim, names=names, grad_terms=grad_terms,
                    hess_terms=hess_terms if hessians else None, prior=prior,
                    label=label or f"CustomModel.from_jax({log_terms.__name__})")
        model._pad = True
        return model


def _as_indices(rows):
    if isinstance(rows, slice):
        return np.arange(rows.start, rows.stop)
    return rows


def _padded(rows, m):
    """``rows`` as indices padded (repeating the first) to the next power of two (at least
    8), and the number of real rows."""
    size = max(8, 1 << (m - 1).bit_length())
    idx = _as_indices(rows)
    if size == m:
        return idx, m
    padded = np.empty(size, dtype=np.int64)
    padded[:m] = idx
    padded[m:] = idx[0]
    return padded, m
