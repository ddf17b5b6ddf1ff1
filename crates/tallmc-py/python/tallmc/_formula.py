"""`tallmc.glm`: a regression model from a formula (``"y ~ age + C(region)"``) and a data
frame, with the design matrix, the categorical coding and the parameters' names made by
formulaic (an optional dependency: ``pip install formulaic``)."""

from __future__ import annotations

import numpy as np

from . import _arrow
from ._parquet import Data
from ._models import (
    LinearRegression, LogisticRegression, NegativeBinomialRegression, PoissonRegression,
    ProbitRegression, RobustRegression, _column, _Design, _kind,
)

__all__ = ["glm", "FAMILIES"]

#: The families :func:`glm` takes, by name, and the model each gives.
FAMILIES = {
    "logistic": LogisticRegression,
    "probit": ProbitRegression,
    "poisson": PoissonRegression,
    "negative-binomial": NegativeBinomialRegression,
    "robust": RobustRegression,
    "linear": LinearRegression,
}

#: formulaic's name for the intercept's term.
_INTERCEPT_TERM = "1"


def _formulaic():
    try:
        import formulaic
    except ImportError:
        raise ImportError("tallmc.glm needs formulaic to read formulas: pip install formulaic "
                          "(or pip install tallmc[formula])") from None
    return formulaic


def _data_label(data) -> str:
    if isinstance(data, Data):
        return data.label
    kind = _kind(data)
    if kind == "pyarrow":
        return _arrow.label(data)
    return f"{kind}.{type(data).__name__}" if kind else type(data).__name__


def _formula_data(data):
    """What formulaic reads: a pyarrow RecordBatch as a Table, a Dataset read into memory
    (``to_table()``), :class:`tallmc.Data` as a Table of its columns (it was read with
    pyarrow); anything else as it is."""
    if isinstance(data, Data):
        import pyarrow as pa

        return pa.table({data.response: data.y,
                         **{n: data.X[:, j] for j, n in enumerate(data.names)}})
    if _kind(data) != "pyarrow":
        return data
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    return _arrow.as_table(data)


def _data_column(data, name: str, what: str):
    """The column ``name`` of ``data`` as a float64 array."""
    if _kind(data) == "pyarrow":
        columns = list(data.schema.names)
    elif hasattr(data, "columns"):
        columns = [str(c) for c in data.columns]
    elif isinstance(data, dict):
        columns = list(data)
    else:
        columns = list(getattr(getattr(data, "dtype", None), "names", None) or [])
    if name not in columns:
        raise ValueError(f"{what} = {name!r}: no such column in the data; the columns are "
                         f"{columns}")
    return np.asarray(_column(data[name], what), dtype=np.float64)


def glm(formula, data, family: str = "logistic", **settings):
    """A regression model from a formula and data, to pass to :func:`tallmc.sample`.

        model = tallmc.glm("y ~ age + income + C(region)", people, family="logistic")
        idata = tallmc.sample(model, tallmc.Nuts())
        idata.posterior["beta"].sel(coefficient="C(region)[T.north]")

    ``formula`` is a Wilkinson formula as formulaic reads it (``C(x)`` a categorical
    column with treatment coding, ``a:b`` an interaction, ``a*b`` both and their
    interaction, ``np.log(x)``, ``I(x**2)``, …); its left-hand side is the response. formulaic
    builds the design matrix and names its columns, and the columns name the parameters
    (``age``, ``C(region)[T.north]``, …). The formula's intercept becomes the model's own
    (``intercept=True``, a parameter named ``intercept`` first, as without formulas); a formula
    without one (``y ~ 0 + x`` or ``y ~ x - 1``) gives ``intercept=False``. Names become the
    header of the draws' CSV files, so the library refuses commas and quotes in them: rather
    than ``C(region, Treatment('north'))``, make ``region`` a pandas Categorical whose first
    category is the reference level, and write ``C(region)``.

    ``data``: a pandas or polars DataFrame, a pyarrow Table, RecordBatch or Dataset (a
    Dataset is read into memory with ``to_table()``), :func:`tallmc.read_parquet`'s data (its
    numeric columns), or anything else formulaic reads. Every
    row is used: a missing value is an error (drop or fill them first), so the rows stay those
    of ``data``. A directory of Parquet shards in the command's row order:
    ``pyarrow.parquet.read_table(tallmc.parquet_files("dir/"))``.

    ``family``: ``"logistic"`` (:class:`LogisticRegression`), ``"probit"``
    (:class:`ProbitRegression`), ``"poisson"`` (:class:`PoissonRegression`),
    ``"negative-binomial"`` (:class:`NegativeBinomialRegression`), ``"robust"``
    (:class:`RobustRegression`) or ``"linear"`` (:class:`LinearRegression`).

    ``settings``: the family's keyword arguments (``prior_sd``, ``standardize``, ``nu``, …);
    ``offset`` / ``exposure`` (poisson and negative-binomial) are the name of a column of
    ``data`` (not a term of the formula) or an array of n numbers. ``intercept`` is the
    formula's to decide.

    Needs formulaic (``pip install formulaic``, or the extra ``tallmc[formula]``).
    """
    if not isinstance(family, str) or family not in FAMILIES:
        raise ValueError(f"family = {family!r}: expected one of "
                         f"{', '.join(repr(f) for f in FAMILIES)}")
    if "intercept" in settings:
        raise TypeError("glm takes no intercept setting: the formula decides it "
                        "(y ~ x has one, y ~ 0 + x or y ~ x - 1 has none)")
    formulaic = _formulaic()
    label = _data_label(data)
    data = _formula_data(data)
    # na_action="raise": no row is dropped, so the rows (and an offset array's) stay data's.
    matrices = formulaic.model_matrix(formula, data, output="numpy", na_action="raise")
    lhs = getattr(matrices, "lhs", None)
    if lhs is None:
        raise ValueError(f"formula {str(formula)!r} has no response; expected 'y ~ …' (the "
                         "response on the left of ~)")
    if lhs.shape[1] != 1:
        raise ValueError(f"formula {str(formula)!r}: the left-hand side gives "
                         f"{lhs.shape[1]} columns {list(lhs.model_spec.column_names)}; "
                         "expected one numeric response")
    rhs = matrices.rhs
    spec = rhs.model_spec
    intercept_columns = [j for term, columns in spec.term_indices.items()
                         if str(term) == _INTERCEPT_TERM for j in columns]
    keep = [j for j in range(rhs.shape[1]) if j not in intercept_columns]
    names = [str(spec.column_names[j]) for j in keep]
    X = np.asarray(rhs)[:, keep]
    for what in ("offset", "exposure"):
        column = settings.get(what)
        if isinstance(column, str):
            if column in names:
                raise ValueError(f"{what} = {column!r} is also a column of the formula's design "
                                 f"matrix; an {what} gets no coefficient, so leave it out of "
                                 "the formula")
            X = np.column_stack([X, _data_column(data, column, what)])
            names.append(column)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(np.asarray(lhs)[:, 0], dtype=np.float64)
    written = formula if isinstance(formula, str) else (
        f"{lhs.model_spec.formula} ~ {spec.formula}")
    label = f"formula {' '.join(str(written).split())!r} on {label}"
    design = _Design(X, names, label)
    return FAMILIES[family](design, y, intercept=bool(intercept_columns), **settings)
