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
import tempfile

import numpy as np

from . import _tallmc
from ._models import Model
from ._samplers import Sampler

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
    (``--step-size`` → ``step_size``)."""
    return _FLAG.sub(lambda m: m.group(1).replace("-", "_"), message)


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
    progress bar is drawn on a terminal unless ``progress=False``. The command's CSV files and
    ``summary.json`` go to ``output_dir`` if given (kept), else to a temporary directory.

    Returns InferenceData with groups ``posterior`` (parameters ``theta`` for the regressions,
    ``mu`` …; continuous-time samplers: their draws on the time grid), ``sample_stats`` (ArviZ's
    names: lp, acceptance_rate, diverging, step_size, tree_depth, n_steps, energy; and tallmc's
    per-iteration counts n_terms, n_gradients, n_hessians, batch_size, …) and attrs: the
    sampler and its settings, the command line, per-datum evaluations, the data fraction per
    iteration, and ``tallmc_summary`` (summary.json as JSON text: adapted tuning, evaluation
    totals, wall times, warnings; a signed HMC-ECS run's sign-corrected summary).
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
    if not progress:
        run_flags.append("--no-progress")
    temporary = None
    if output_dir is None:
        temporary = tempfile.TemporaryDirectory(prefix="tallmc-")
        out = temporary.name
    else:
        out = os.fspath(output_dir)
    argv = (["sample", sampler.command] + model.flags()
            + ["--data", "NumPy arrays", "--out", out, "--no-report"]
            + run_flags + sampler.flags())
    try:
        try:
            _tallmc.run(argv, model.X, model.y)
        except ValueError as e:
            raise ValueError(pythonic(str(e))) from None
        idata = read_run(out)
    finally:
        if temporary is not None:
            temporary.cleanup()
    idata.attrs["tallmc_command"] = "tallmc " + " ".join(argv)
    idata.attrs["sampler_settings"] = json.dumps(sampler.settings)
    return idata


def _read_chain(path: str):
    """Column names and the numbers (rows × columns) of one CmdStan-layout CSV file."""
    with open(path, newline="") as f:
        rows = csv.reader(line for line in f if line.strip() and not line.startswith("#"))
        header = next(rows)
        values = np.array([[float(v) for v in row] for row in rows], dtype=np.float64)
    return header, values.reshape(-1, len(header))


def read_run(directory):
    """InferenceData of a `tallmc sample` output directory (chain_1.csv …, summary.json): what
    :func:`sample` returns, also for runs of the command."""
    import arviz as az

    directory = os.fspath(directory)
    with open(os.path.join(directory, "summary.json")) as f:
        summary = json.load(f)
    chains = []
    k = 1
    while os.path.exists(os.path.join(directory, f"chain_{k}.csv")):
        chains.append(_read_chain(os.path.join(directory, f"chain_{k}.csv")))
        k += 1
    if not chains:
        raise ValueError(f"{directory}: no chain_1.csv")
    header = chains[0][0]
    draws = min(v.shape[0] for _, v in chains)  # an interrupted run's chains may differ
    table = np.stack([v[:draws] for _, v in chains])  # (chain, draw, column)
    posterior, stats, shapes = {}, {}, {}
    for j, name in enumerate(header):
        column = table[:, :, j]
        if name.endswith("__"):
            key = _STAT_NAMES.get(name, name[:-2])
            stats[key] = column.astype(bool) if key == "diverging" else column
            continue
        m = _INDEXED.match(name)
        if m:
            shapes.setdefault(m.group(1), []).append((int(m.group(2)), column))
        else:
            posterior[name] = column
    for name, parts in shapes.items():
        parts.sort(key=lambda p: p[0])
        posterior[name] = np.stack([c for _, c in parts], axis=-1)
    idata = az.from_dict(posterior=posterior, sample_stats=stats)
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
