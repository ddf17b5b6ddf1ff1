"""Data that stay where they are: a Dask DataFrame or a list of Parquet files, as a model's
data (:class:`Sharded`), and what a Dask worker does with its shard (load it, one pass over
it, take rows from it). The driver never reads the rows; :mod:`tallmc.dask` persists the
shards on the workers and runs the passes there.

Shards are a DataFrame's partitions in order, or the files in the order given (a directory:
:func:`tallmc.parquet_files`' order, as the command reads it). Rows are numbered across the
shards in that order, as if the shards were concatenated.
"""

from __future__ import annotations

import os

import numpy as np

from . import _arrow, _tallmc

__all__ = ["Sharded", "describe"]


def _is_dask_frame(obj) -> bool:
    module = type(obj).__module__.split(".")[0]
    return module in ("dask", "dask_expr") and hasattr(obj, "to_delayed") and \
        hasattr(obj, "columns")


def _parquet_paths(obj):
    """The files of a list of Parquet paths (a directory among them: its shards), or None when
    ``obj`` is not a list of paths."""
    if not isinstance(obj, (list, tuple)) or not obj:
        return None
    if not all(isinstance(p, (str, os.PathLike)) for p in obj):
        return None
    from ._parquet import parquet_files

    files = []
    for p in obj:
        files.extend(parquet_files(os.fspath(p)))
    return files


class Sharded:
    """A model's data left where they are: a Dask DataFrame's partitions, or Parquet files,
    read by the cluster's workers (:class:`tallmc.dask.Engine`). The driver knows only the
    column names (and, for files, the rows per shard from their footers).

    Attributes: ``kind`` (``"dask"`` or ``"parquet"``), ``frame`` (the Dask DataFrame, or
    ``None``), ``files`` (the Parquet files in shard order, or ``None``), ``response``,
    ``names`` (the covariates, in order: the parameters' names), ``label``."""

    def __init__(self, kind, frame, files, response, names, label):
        self.kind = kind
        self.frame = frame
        self.files = files
        self.response = response
        self.names = list(names)
        self.label = label

    @property
    def num_shards(self) -> int:
        return len(self.files) if self.files is not None else self.frame.npartitions

    def __repr__(self) -> str:
        return f"Sharded({self.label}: response {self.response!r}, covariates {self.names})"


def describe(X, y, columns=None):
    """``X`` as :class:`Sharded` when it is a Dask DataFrame or a list of Parquet paths (``y``
    names the response column; ``columns`` picks the covariates, else every other numeric
    column), else None."""
    files = _parquet_paths(X)
    is_frame = _is_dask_frame(X)
    if files is None and not is_frame:
        return None
    if not isinstance(y, str):
        raise TypeError(f"y = {y!r}: with data on a cluster (a Dask DataFrame, Parquet files) "
                        "y names the response column")
    if is_frame:
        available = [(str(c), X.dtypes[c]) for c in X.columns]
        numeric = [name for name, dtype in available if np.issubdtype(dtype, np.number)
                   or np.issubdtype(dtype, np.bool_)]
        where = f"Dask DataFrame ({X.npartitions} partitions)"
    else:
        from ._parquet import _pyarrow_parquet

        schema = _pyarrow_parquet().read_schema(files[0])
        available = [(field.name, field.type) for field in schema]
        numeric = [field.name for field in schema if _arrow.is_number(field.type)]
        where = f"{len(files)} Parquet files" if len(files) != 1 else files[0]
    names = [name for name, _ in available]
    if y not in names:
        raise ValueError(f"y = {y!r}: no such column; the columns are {names}")
    if columns is None:
        covariates = [name for name in numeric if name != y]
    else:
        covariates = [str(c) for c in columns]
        for c in covariates:
            if c not in names:
                raise ValueError(f"columns: {c!r} is not a column; the columns are {names}")
            if c == y:
                raise ValueError(f"columns: {c!r} is the response")
    kind = "dask" if is_frame else "parquet"
    return Sharded(kind, X if is_frame else None, files, y, covariates, where)


# --- What a worker runs next to its shard -----------------------------------------------------

def load_parquet(path: str, response: str, names):
    """One Parquet file as (X rows × p row-major float64, y): converted exactly, a null, NaN or
    ±∞ an error naming the file, the column and the row."""
    from ._parquet import _pyarrow_parquet

    table = _pyarrow_parquet().read_table(path, columns=[response, *names])
    n = table.num_rows
    X = np.empty((n, len(names)), dtype=np.float64)
    y = np.empty(n, dtype=np.float64)
    where = f"{path}: "
    _arrow.fill(table.column(response), y, response, where, True)
    for j, name in enumerate(names):
        _arrow.fill(table.column(name), X[:, j], name, where, True)
    return X, y


def load_partition(frame, response: str, names, shard: int):
    """One pandas partition of a Dask DataFrame as (X, y), float64 and finite."""
    try:
        X = np.ascontiguousarray(frame[list(names)].to_numpy(dtype=np.float64))
        y = np.ascontiguousarray(frame[response].to_numpy(dtype=np.float64))
    except (TypeError, ValueError) as e:
        raise ValueError(f"partition {shard}: the columns do not convert to float64 numbers "
                         f"({e})") from None
    for values, what in ((X, "a covariate"), (y, f"the response {response!r}")):
        if not np.isfinite(values).all():
            bad = np.argwhere(~np.isfinite(values))[0]
            raise ValueError(f"partition {shard}, row {bad[0]}: {what} is "
                             f"{values[tuple(bad)]}; expected finite numbers")
    return X, y


def num_rows(shard) -> int:
    return len(shard[1])


def _aligned(a):
    """``a`` itself, or an aligned copy when it is a view of a network message's buffer (a
    shard Dask moved between workers arrives so)."""
    return a if a.flags.aligned and a.flags.c_contiguous else np.ascontiguousarray(a).copy()


def shard_pass(shard, model_json: str, names, theta, kind_json: str, total_rows: int):
    """One pass over this shard (the Rust per-shard kernel, GIL released; its values were
    checked finite when the shard was loaded)."""
    X, y = _aligned(shard[0]), _aligned(shard[1])
    return _tallmc.shard_sums(model_json, X if names else None, y, list(names) or None, theta,
                              kind_json, total_rows, False)


def take(shards, positions):
    """The rows at ``positions[k]`` (indices within shard k) of each of this worker's
    ``shards``: one (X, y) per shard, in the order given."""
    return [(X[local], y[local]) for (X, y), local in zip(shards, positions)]
