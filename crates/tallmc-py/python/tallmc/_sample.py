"""`tallmc.sample`: run a sampler on a model through the `tallmc` command's library and return
ArviZ's InferenceData.

The run is the command's (`tallmc sample <sampler> ...`): it writes CmdStan-layout CSV files
and `summary.json` into ``output_dir`` (a temporary directory by default), which are then read
back here, the numbers exactly (Python's float parsing is correctly rounded, so the draws are
the command's bits).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import tempfile
import warnings

import numpy as np

from . import _progress, _tallmc
from ._models import Model
from ._samplers import Sampler, keyword_name

__all__ = ["sample", "read_run"]

# CmdStan's stat columns under ArviZ's standard names (as arviz.from_cmdstan names them).
_STAT_NAMES = {
    "lp__": "lp",
    "accept_stat__": "acceptance_rate",
    "divergent__": "diverging",
    "stepsize__": "step_size",
    "treedepth__": "tree_depth",
    "n_leapfrog__": "n_steps",
    "energy__": "energy",
}
_INDEXED = re.compile(r"^(.*)\.(\d+)$")
# HMC-ECS's estimate of the log-likelihood is a per-draw statistic, not ArviZ's pointwise
# log_likelihood group: it keeps a name of its own.
_STAT_NAMES["log_likelihood__"] = "log_likelihood_estimate"
_FLAG = re.compile(r"--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def pythonic(message: str) -> str:
    """The command's message with its flags as the keyword arguments that set them
    (``--step-size`` → ``step_size``, ``--lambda`` → ``lambda_``)."""
    return _FLAG.sub(lambda m: keyword_name(m.group(1)), message)


def _count(name: str, value, least: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} = {value!r}: expected an integer")
    if value < least:
        raise ValueError(f"{name} = {value}: expected at least {least}")
    return str(int(value))


def sample(model: Model, sampler: Sampler, chains: int = 4, warmup: int = 1000,
           draws: int = 1000, seed: int = 1, init: str = "dispersed", threads=None,
           progress: bool = True, output_dir=None):
    """Samples ``model``'s posterior with ``sampler`` and returns ArviZ InferenceData.

    Same settings, same seed → the same draws as ``tallmc sample`` on the same data, bit for
    bit. Chains run in parallel on all cores (``threads`` limits them) with the GIL released;
    Ctrl-C stops every chain after its current iteration and raises ``KeyboardInterrupt``. A
    progress bar is drawn (on a terminal, the command's; in a Jupyter notebook, a text bar once
    the run has taken 2 s; none when output goes to a log) unless ``progress=False``. The
    command's CSV files and ``summary.json`` go to ``output_dir`` if given (kept), else to a
    temporary directory.

    Returns InferenceData with groups ``posterior`` (parameters ``theta`` for the regressions,
    ``mu`` …; continuous-time samplers: their draws on the time grid), ``sample_stats`` (ArviZ's
    names: lp, acceptance_rate, diverging, step_size, tree_depth, n_steps, energy; and tallmc's
    per-iteration counts n_terms, n_gradients, n_hessians, batch_size, …) and attrs: the
    sampler and its settings, the command line, per-datum evaluations, the data fraction per
    iteration, and ``tallmc_summary`` (summary.json as JSON text: adapted tuning, evaluation
    totals, wall times, warnings; a signed HMC-ECS run's sign-corrected summary). A signed
    HMC-ECS run's per-draw sign is ``sample_stats["sign"]`` (±1). A continuous-time sampler
    with ``skeleton=True`` adds a ``skeleton`` group (see :func:`read_run`).
    """
    if not isinstance(model, Model):
        raise TypeError(f"model is a {type(model).__name__}; expected a tallmc model "
                        "(tallmc.LogisticRegression(X, y), tallmc.GaussianMean(y, sigma), …)")
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler is a {type(sampler).__name__}; expected a tallmc sampler "
                        "(tallmc.Nuts(), tallmc.HmcEcs(subsample=1000), …)")
    run_flags = [
        "--chains", _count("chains", chains, 1),
        "--warmup", _count("warmup", warmup, 0),
        "--draws", _count("draws", draws, 4),
        "--seed", _count("seed", seed, 0),
        "--init", str(init),
    ]
    if threads is not None:
        run_flags += ["--threads", _count("threads", threads, 1)]
    draw = _progress.where_to_draw(progress)
    bar = None
    if draw != "terminal":
        run_flags.append("--no-progress")
    if draw == "python":
        bar = _progress.TextBar(f"tallmc {sampler.command}")
    temporary = None
    if output_dir is None:
        temporary = out = tempfile.mkdtemp(prefix="tallmc-")
    else:
        out = os.fspath(output_dir)
    argv = (["sample", sampler.command] + model.flags()
            + ["--data", "NumPy arrays", "--out", out, "--no-report"]
            + run_flags + sampler.flags())
    try:
        try:
            _tallmc.run(argv, model.X, model.y, bar)
        except ValueError as e:
            raise ValueError(pythonic(str(e))) from None
        finally:
            if bar is not None:
                bar.close()
        idata = read_run(out)
    finally:
        if temporary is not None:
            # Errors ignored: after Ctrl-C in the setup, the sampling thread may still be ending.
            shutil.rmtree(temporary, ignore_errors=True)
    idata.attrs["tallmc_command"] = "tallmc " + " ".join(argv)
    idata.attrs["sampler_settings"] = json.dumps(sampler.settings)
    return idata


def _read_csv(path: str, text_column=None):
    """Column names and the numbers (rows × columns) of one tallmc CSV file (comment lines
    start with ``#``); with ``text_column``, that column is read as strings, returned third,
    and left out of the numbers (``NaN`` there).

    NumPy's text reader converts each field with Python's correctly rounded string-to-double,
    so the numbers (written in Rust's shortest round-trip form) are the run's bits."""
    header, header_line = None, 0
    with open(path, newline="") as f:
        for header_line, line in enumerate(f):
            if line.strip() and not line.startswith("#"):
                header = next(csv.reader([line]))
                break
    if header is None:
        raise ValueError(f"{path}: no header line")
    text_at = None if text_column is None else header.index(text_column)
    numeric = [j for j in range(len(header)) if j != text_at]
    read = dict(delimiter=",", comments="#", skiprows=header_line + 1, ndmin=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a chain interrupted before its first draw
        numbers = np.loadtxt(path, dtype=np.float64, usecols=numeric, **read)
        rows = numbers.shape[0] if numbers.size else 0
        values = np.full((rows, len(header)), np.nan)
        values[:, numeric] = numbers.reshape(rows, len(numeric))
        if text_at is None:
            return header, values
        text = np.loadtxt(path, dtype=str, usecols=[text_at], **read).reshape(rows)
    return header, values, text


def _group_columns(header, table, skip):
    """Columns `name` and `name.1`, `name.2`, … of ``table`` (…, column) as arrays named
    `name` (indexed ones stacked on a last axis), leaving out the names in ``skip``."""
    plain, indexed = {}, {}
    for j, name in enumerate(header):
        if name in skip:
            continue
        m = _INDEXED.match(name)
        if m:
            indexed.setdefault(m.group(1), []).append((int(m.group(2)), table[..., j]))
        else:
            plain[name] = table[..., j]
    for name, parts in indexed.items():
        parts.sort(key=lambda p: p[0])
        plain[name] = np.stack([c for _, c in parts], axis=-1)
    return plain


def _read_skeletons(directory: str, chains: int):
    """The ``skeleton`` group (an xarray Dataset) of skeleton_1.csv …, or None without them."""
    paths = [os.path.join(directory, f"skeleton_{k}.csv") for k in range(1, chains + 1)]
    if not all(os.path.exists(p) for p in paths):
        return None
    import xarray as xr

    tables = [_read_csv(path, text_column="event") for path in paths]
    header = tables[0][0]
    counts = [len(values) for _, values, _ in tables]
    longest = max(counts)
    numbers = np.full((chains, longest, len(header)), np.nan)
    events = np.full((chains, longest), "", dtype=object)
    for c, (_, values, kinds) in enumerate(tables):
        numbers[c, :len(values)] = values
        events[c, :len(kinds)] = kinds
    columns = _group_columns(header, numbers, skip={"event"})
    data = {"kind": (("chain", "event"), events.astype(str)),
            "num_events": (("chain",), np.array(counts))}
    for name, values in columns.items():
        key = "v_" + name[2:] if name.startswith("v.") else name
        dims = ["chain", "event"] + [f"{key.removeprefix('v_')}_dim_{i}"
                                     for i in range(values.ndim - 2)]
        if name == "coordinate":
            values = np.nan_to_num(values, nan=-1).astype(np.int64)
        data[key] = (dims, values)
    return xr.Dataset(data, coords={"chain": np.arange(chains), "event": np.arange(longest)})


def read_run(directory):
    """InferenceData of a `tallmc sample` output directory (chain_1.csv …, summary.json): what
    :func:`sample` returns, also for runs of the command.

    If the directory holds skeleton_1.csv … (a continuous-time run with ``--skeleton``), they
    become the group ``skeleton``, dims ``(chain, event)``: ``time``, ``kind`` (start, bounce,
    flip, refresh, divergence, end…), ``coordinate`` (the flipped coordinate + 1 for Zig-Zag,
    else 0), the position at the event (``theta``…) and the velocity after it (``v_theta``…).
    Chains have different numbers of events: ``num_events`` has each chain's, and the rows past
    it are padded (NaN, kind "").
    """
    import arviz as az

    directory = os.fspath(directory)
    with open(os.path.join(directory, "summary.json")) as f:
        summary = json.load(f)
    chains = []
    k = 1
    while os.path.exists(os.path.join(directory, f"chain_{k}.csv")):
        chains.append(_read_csv(os.path.join(directory, f"chain_{k}.csv")))
        k += 1
    if not chains:
        raise ValueError(f"{directory}: no chain_1.csv")
    header = chains[0][0]
    draws = min(v.shape[0] for _, v in chains)  # an interrupted run's chains may differ
    table = np.stack([v[:draws] for _, v in chains])  # (chain, draw, column)
    stats = {}
    for j, name in enumerate(header):
        if name.endswith("__"):
            key = _STAT_NAMES.get(name, name[:-2])
            stats[key] = table[:, :, j].astype(bool) if key == "diverging" else table[:, :, j]
    posterior = _group_columns(header, table, skip={n for n in header if n.endswith("__")})
    idata = az.from_dict(posterior=posterior, sample_stats=stats)
    skeleton = _read_skeletons(directory, len(chains))
    if skeleton is not None:
        idata.add_groups(skeleton=skeleton, warn_on_custom_groups=False)
    totals = summary.get("totals", {})
    attrs = {
        "inference_library": "tallmc",
        "sampler": str(summary.get("sampler", "")),
        "model": str(summary.get("model", "")),
        "num_rows": int(summary.get("n", 0)),
        "interrupted": int(bool(summary.get("interrupted", False))),
        "data_fraction_per_iteration": float(totals.get("data_fraction_per_iteration", 1.0)),
        "evaluations_per_draw": float(totals.get("evals_per_draw", 0.0)),
        "evaluations_total": int(totals.get("evals", {}).get("total", 0)),
        "tallmc_summary": json.dumps(summary),
    }
    idata.attrs.update(attrs)
    for group in ("posterior", "sample_stats"):
        getattr(idata, group).attrs.update(attrs)
    return idata
