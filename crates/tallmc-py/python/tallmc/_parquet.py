"""`tallmc.read_parquet`: a Parquet file or a directory of shards read into memory exactly as
the command's ``--data PATH --y COLUMN --columns a,b,c`` reads it (the Rust reader in
``tallmc-io``): the same shards in the same order, the same columns, the same numbers, so the
same seed gives the same draws in Python and on the command line. Needs pyarrow, imported only
here (``pip install pyarrow``)."""

from __future__ import annotations

import functools
import os

import numpy as np

from . import _arrow

__all__ = ["Data", "read_parquet", "parquet_files"]


def _pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("tallmc.read_parquet needs pyarrow to read Parquet files: "
                          "pip install pyarrow") from None
    return pq


class Data:
    """Covariates and responses in memory, with their names and where they came from: what
    :func:`read_parquet` returns. Every regression takes it as ``X``, with ``y`` left out (its
    response is the one read); :class:`Gaussian` and :class:`GaussianMean` take it as ``y``.

    Attributes: ``X`` (n × p float64, row-major: the samplers read it in place), ``y`` (n
    float64), ``names`` (the covariates' columns: the parameters' names), ``response`` (the
    response's column), ``path`` (as given), ``shards`` (each file and its rows, in row order),
    ``skipped_columns`` (columns left out because they do not hold numbers, with their Arrow
    types; only when ``columns`` was not given), ``label``.

    A model on it records its source in the run (``tallmc_run``: ``{"kind": "file", "path":
    …, "response": …, "columns": …}``, the command's ``--data``, ``--y`` and ``--columns``),
    so ``tallmc repeat`` reads the files again; the draws are those of the command on the same
    path, bit for bit. (Change ``X`` or ``y`` in place and the record no longer describes the
    numbers sampled: make a model of the arrays instead, ``tallmc.LogisticRegression(data.X,
    data.y)``, whose parameters are then ``x0, x1, …``.)
    """

    def __init__(self, X, y, names, response: str, path: str, shards, skipped_columns,
                 columns=None):
        self.X = X
        self.y = y
        self.names = list(names)
        self.response = response
        self.path = path
        self.shards = list(shards)
        self.skipped_columns = list(skipped_columns)
        self.label = path
        self._columns = None if columns is None else list(columns)

    @property
    def num_rows(self) -> int:
        """Number of rows n."""
        return len(self.y)

    def source(self) -> dict:
        """The run's data part for these data: the file, read as the command reads
        ``--data PATH --y RESPONSE [--columns …]`` (the path made absolute)."""
        return {"kind": "file", "path": os.path.abspath(self.path), "response": self.response,
                "columns": self._columns}

    def __repr__(self) -> str:
        shards = f", {len(self.shards)} shards" if len(self.shards) != 1 else ""
        return (f"Data({self.path!r}: {self.num_rows} rows{shards}, response {self.response!r}, "
                f"covariates {self.names})")


def _natural_cmp(a: bytes, b: bytes) -> int:
    """Natural order of the Rust reader: runs of ASCII digits compare as numbers (then by
    length, so ``01`` after ``1``), every other byte as itself."""
    i = j = 0
    while True:
        if i == len(a) or j == len(b):
            return (i < len(a)) - (j < len(b))
        x, y = a[i], b[j]
        if 48 <= x <= 57 and 48 <= y <= 57:
            i2, j2 = i, j
            while i2 < len(a) and 48 <= a[i2] <= 57:
                i2 += 1
            while j2 < len(b) and 48 <= b[j2] <= 57:
                j2 += 1
            da, db = a[i:i2], b[j:j2]
            ta, tb = da.lstrip(b"0"), db.lstrip(b"0")
            for u, v in ((len(ta), len(tb)), (ta, tb), (len(da), len(db))):
                if u != v:
                    return -1 if u < v else 1
            i, j = i2, j2
        else:
            if x != y:
                return -1 if x < y else 1
            i, j = i + 1, j + 1


def _collect(directory: str, relative: str, found: list) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(("_", ".")):
                continue
            rel = os.path.join(relative, entry.name) if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                _collect(entry.path, rel, found)
            elif entry.name.rpartition(".")[2].lower() == "parquet" and "." in entry.name:
                found.append((rel, entry.path))


def parquet_files(path) -> list:
    """The Parquet files that make up ``path``, in row order, as the command reads them:
    ``path`` itself if it is a file; for a directory, its ``*.parquet`` files and those of its
    subdirectories, skipping names that start with ``_`` or ``.`` (``_metadata``,
    ``_SUCCESS``, ``.crc`` files), in *natural* order of their paths relative to it (runs of
    digits compare as numbers: ``part.2.parquet`` before ``part.10.parquet``, as Dask and Spark
    number their partitions).

    ``pyarrow.dataset.dataset(directory)`` lists files in lexical order (``part.10`` before
    ``part.2``); ``pyarrow.dataset.dataset(tallmc.parquet_files(directory))`` or
    ``pyarrow.parquet.read_table(tallmc.parquet_files(directory))`` reads the rows in the
    command's order. Needs no pyarrow.
    """
    path = os.fspath(path)
    os.stat(path)  # FileNotFoundError naming the path
    if not os.path.isdir(path):
        return [path]
    found = []
    _collect(path, "", found)
    if not found:
        raise ValueError(f"{path}: no Parquet files in this directory (looked for *.parquet "
                         "files, also in subdirectories, skipping names that start with `_` "
                         "or `.`)")
    order = functools.cmp_to_key(lambda a, b: _natural_cmp(os.fsencode(a[0]),
                                                           os.fsencode(b[0])))
    return [full for _, full in sorted(found, key=order)]


def _check_selection(y, columns):
    if not isinstance(y, str):
        raise TypeError(f"y = {y!r}: expected the name of the response's column")
    if not y:
        raise ValueError("y = '': expected the name of the response's column")
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise TypeError(f"columns = {columns!r}: expected a list of column names "
                        "(columns=['age', 'income'])")
    columns = list(columns)
    if not columns:
        raise ValueError("columns = []: expected at least one column name (or None: every "
                         "column holding numbers)")
    for k, c in enumerate(columns):
        if c == y:
            raise ValueError(f"columns = {columns}: expected columns other than the response "
                             f"{y!r}")
        if c in columns[:k]:
            raise ValueError(f"columns = {columns}: expected each column once ({c!r} is named "
                             "twice)")
    return columns


def _check_column(file: str, schema, name: str, role: str) -> None:
    index = schema.get_field_index(name)
    if index < 0:
        available = ", ".join(f"{f.name} ({f.type})" for f in schema)
        hint = " (name the response's column with y=…)" if role == "the response" else ""
        raise ValueError(f"{file}: no column {name!r} ({role}); the file's columns are: "
                         f"{available}{hint}")
    data_type = schema.field(index).type
    if not _arrow.is_number(data_type):
        hint = (" (name the covariates with columns=[…] to leave it out)"
                if role == "a covariate" else "")
        raise _arrow.not_numbers(name, data_type, f"{file}: ", hint)


def read_parquet(path, y: str = "y", columns=None) -> Data:
    """Reads a ``.parquet`` file or a directory of shards into memory, as the command's
    ``--data PATH --y Y --columns a,b,c`` does, and returns :class:`Data`, which the models
    take in place of ``X`` and ``y``:

        data = tallmc.read_parquet("claims/", y="claim")       # claims/part.0.parquet, …
        idata = tallmc.sample(tallmc.PoissonRegression(data, exposure="years"), tallmc.Nuts())

    **Shards** (a directory): as :func:`parquet_files` lists them — natural order of their
    relative paths (``part.2`` before ``part.10``), names starting with ``_`` or ``.``
    skipped; the rows are their concatenation in that order, as on the command line. Column
    types may differ between shards (float32 in one, float64 in another).

    **Columns.** ``y``: the response's column (default ``"y"``). ``columns``: the covariates
    in this order (an offset or exposure column among them); ``None``: every other column
    holding numbers, in the first shard's order (the others — text, dates, … — are listed in
    ``skipped_columns``). The covariates' names name the parameters.

    **Values.** float64 as they are; float32, integers and booleans (0, 1) converted exactly;
    64-bit integers beyond ±2⁵³, nulls, NaN and ±∞ are a ``ValueError`` naming the file, the
    column and the row (in the file and overall).

    **Memory.** The covariates are written once into one row-major float64 array (n × p,
    what the samplers read), a shard at a time: beside it, one shard's columns are in memory.
    For data larger than memory, convert them once on the command line, ``tallmc convert
    claims/ --y claim --out claims.bin``, and pass the memory-mapped binary file (or
    ``np.load``/``np.memmap`` arrays) instead.

    Needs pyarrow (``pip install pyarrow``).
    """
    path = os.fspath(path)
    columns = _check_selection(y, columns)
    pq = _pyarrow_parquet()
    files = parquet_files(path)
    shards, covariates, skipped = [], None, []
    for file in files:  # every footer first: names, types and rows checked before reading
        try:
            footer = pq.read_metadata(file)
            schema = footer.schema.to_arrow_schema()
        except Exception as e:  # pyarrow's ArrowInvalid, OSError, …
            raise ValueError(f"{file}: not a readable Parquet file: {e}") from None
        if covariates is None:
            if columns is not None:
                covariates = columns
            else:
                covariates = []
                for field in schema:
                    if field.name == y:
                        continue
                    if _arrow.is_number(field.type):
                        covariates.append(field.name)
                    else:
                        skipped.append((field.name, str(field.type)))
        _check_column(file, schema, y, "the response")
        for name in covariates:
            _check_column(file, schema, name, "a covariate")
        shards.append((file, footer.num_rows))
    n = sum(rows for _, rows in shards)
    X = np.empty((n, len(covariates)), dtype=np.float64)
    response = np.empty(n, dtype=np.float64)
    first = 0
    for file, rows in shards:
        with pq.ParquetFile(file) as reader:
            table = reader.read(columns=[y, *covariates])
        if table.num_rows != rows:
            raise ValueError(f"{file}: {table.num_rows} rows read, but its footer says {rows}")
        where = f"{file}: "
        _arrow.fill(table.column(y), response[first:first + rows], y, where, True, first)
        for j, name in enumerate(covariates):
            _arrow.fill(table.column(name), X[first:first + rows, j], name, where, True, first)
        first += rows
        del table
    return Data(X, response, covariates, y, path, shards, skipped, columns)
