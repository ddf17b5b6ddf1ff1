"""Arrow data as float64: pyarrow Tables, RecordBatches, Datasets and arrays, recognised by
their type's module (pyarrow is imported only for objects that come from it), converted as
the Rust Parquet reader converts them (``tallmc-io``):

* numbers are float64 and float32 columns, integers of 8 to 64 bits, and booleans (0, 1);
  every one converts exactly (64-bit integers beyond ±2⁵³, which float64 would round, are an
  error naming the column and row);
* a null is an error naming the column and the row;
* any other type (strings, dates, dictionaries, decimals, float16, …) is a ``ValueError``
  naming the column and its type, as a DataFrame column that is not numbers is.
"""

from __future__ import annotations

import numpy as np

#: 2⁵³: every integer up to it in magnitude is a float64.
_EXACT_INTEGER_LIMIT = 2**53

#: What a column must hold, in messages.
NUMBERS = "numbers (float64, float32, integers of up to 64 bits, or booleans)"


def is_arrow(obj) -> bool:
    """Whether ``obj`` comes from pyarrow (by its type's module; nothing is imported)."""
    return type(obj).__module__.split(".")[0] == "pyarrow"


def is_array(obj) -> bool:
    """Whether ``obj`` is one pyarrow column (an Array or a ChunkedArray)."""
    if not is_arrow(obj):
        return False
    import pyarrow as pa

    return isinstance(obj, (pa.Array, pa.ChunkedArray))


def is_dataset(obj) -> bool:
    """Whether ``obj`` is a ``pyarrow.dataset.Dataset``."""
    if not is_arrow(obj):
        return False
    import pyarrow.dataset as ds

    return isinstance(obj, ds.Dataset)


def as_table(obj):
    """A Table or RecordBatch as it is; a Dataset read into memory (``to_table()``, its
    fragments in the dataset's order)."""
    return obj.to_table() if is_dataset(obj) else obj


def label(obj) -> str:
    """What the data were, for messages and outputs (``pyarrow.Table``, …)."""
    if is_dataset(obj):
        return f"pyarrow.dataset.{type(obj).__name__}"
    return f"pyarrow.{type(obj).__name__}"


def is_number(data_type) -> bool:
    """Whether an Arrow column type holds numbers that convert exactly to float64 (the Rust
    reader's list: floats of 32 and 64 bits, integers of 8 to 64 bits, booleans)."""
    import pyarrow.types as pt

    return (pt.is_float64(data_type) or pt.is_float32(data_type) or pt.is_integer(data_type)
            or pt.is_boolean(data_type))


def not_numbers(name: str, data_type, where: str = "", hint: str = "") -> ValueError:
    """The error for a column that does not hold numbers."""
    return ValueError(f"{where}column {name!r} has type {data_type}; expected {NUMBERS}"
                      f"{hint}")


def fill(column, out, name: str, where: str = "", finite: bool = False, overall=None):
    """Writes the Arrow array or chunked array ``column`` into the float64 array ``out`` (1-D,
    one slot per row; a column of a row-major array is fine), converting exactly.

    Errors (``ValueError``, naming ``where`` — a file, or nothing —, the column and the row;
    with ``overall``, the number of rows before this file's, also the row over all files): a
    type that is not numbers, a null, a 64-bit integer beyond ±2⁵³, and with ``finite`` a NaN
    or ±∞ (without it they are left to the library's checks, as for arrays and DataFrames)."""
    if not is_number(column.type):
        raise not_numbers(name, column.type, where)
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    start = 0
    for chunk in chunks:
        k = len(chunk)

        def bad(row, problem):
            row += start
            at = f"row {row}" if overall is None else (
                f"row {row} of this file (row {overall + row} overall)")
            return ValueError(f"{where}column {name!r}, {at}: {problem}")

        if chunk.null_count:
            row = int(np.argmax(chunk.is_null().to_numpy(zero_copy_only=False)))
            raise bad(row, "missing value (null); expected a number in every row (drop or "
                           "impute the missing values first)")
        values = chunk.to_numpy(zero_copy_only=False)
        if values.dtype.kind in "iu" and values.dtype.itemsize == 8:
            beyond = values > _EXACT_INTEGER_LIMIT
            if values.dtype.kind == "i":
                beyond |= values < -_EXACT_INTEGER_LIMIT
            if beyond.any():
                row = int(np.argmax(beyond))
                raise bad(row, f"integer {values[row]} is beyond ±2^53, where float64 cannot "
                               "hold every integer exactly; expected smaller integers (or "
                               "store the column as float64)")
        target = out[start:start + k]
        target[...] = values
        if finite and not np.isfinite(target).all():
            row = int(np.argmin(np.isfinite(target)))
            raise bad(row, f"value {target[row]} is not finite; expected a finite number")
        start += k


def column(values, name: str):
    """An Arrow array or chunked array as a new float64 array (see :func:`fill`)."""
    out = np.empty(len(values), dtype=np.float64)
    fill(values, out, name)
    return out


def columns(table, indices):
    """Columns ``indices`` (positions) of a Table or RecordBatch as one row-major float64
    array (n × p), written column by column: the one copy."""
    names = table.schema.names
    out = np.empty((table.num_rows, len(indices)), dtype=np.float64)
    for j, i in enumerate(indices):
        fill(table.column(i), out[:, j], names[i])
    return out
