"""`tallmc.sample`: run a sampler on a model natively — the run is the library's typed run
value, handed over as JSON with the data's arrays — and return ArviZ's InferenceData built from
the arrays the run hands back from memory. No file is written unless ``output_dir`` is given
(then exactly the files the command writes)."""

from __future__ import annotations

import json
import numbers
import os

from . import _progress, _tallmc
from ._inference import inference_data
from ._custom import CustomModel
from ._models import Model
from ._names import pythonic
from ._samplers import Sampler

__all__ = ["sample"]

_INITS = ("dispersed", "mode", "uniform")


def _count(name: str, value, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} = {value!r}: expected an integer")
    if value < least:
        raise ValueError(f"{name} = {value}: expected at least {least}")
    return int(value)


def _sampler_spec(model, sampler) -> dict:
    """The sampler's settings; for a model of your own without Hessians, first-order control
    variates unless the sampler's ``cv_order`` was given (second order needs Hessians)."""
    spec = sampler.spec()
    # The SG kernels take cv_order only with cv; HMC-ECS always has control variates.
    uses_cv = spec.get("cv", False) or not sampler.takes("cv")
    if (isinstance(model, CustomModel) and model.hess_terms is None and uses_cv
            and "cv_order" not in spec and sampler.takes("cv_order")):
        spec["cv_order"] = 1
    return spec


def sample(model: Model, sampler: Sampler, chains: int = 4, warmup: int = 1000,
           draws: int = 1000, seed: int = 1, init: str = "dispersed", threads=None,
           progress: bool = True, output_dir=None, overwrite: bool = False, engine=None,
           by_shard: bool = False):
    """Samples ``model``'s posterior with ``sampler`` and returns ArviZ InferenceData.

    Same settings, same seed → the same draws as ``tallmc sample`` on the same data, bit for
    bit. Chains run in parallel on all cores (``threads`` limits them) with the GIL released;
    Ctrl-C stops every chain after its current iteration and raises ``KeyboardInterrupt``. A
    progress bar is drawn (on a terminal, the command's; in a Jupyter notebook, a text bar once
    the run has taken 2 s; none when output goes to a log) unless ``progress=False``.

    Nothing is written to disk unless ``output_dir`` is given: then the command's files go
    there (``chain_1.csv`` …, ``summary.json``; a non-empty directory is refused unless
    ``overwrite=True``), and ``tallmc.read_run(output_dir)`` reads them back as this.

    **Data on a cluster.** A model whose data are a Dask DataFrame or Parquet files
    (``tallmc.LogisticRegression(ddf, y="y")``) runs with ``engine=tallmc.dask.Engine(client)``:
    the set-up's passes run as one task per shard next to the shards, and the chains read only
    the rows they need, fetched from the workers a window of iterations ahead (perturbed
    ``HmcEcs`` with ``subsample`` given). ``by_shard=True`` makes a run on data in memory
    reduce its passes over the data's files one by one (:func:`tallmc.read_parquet`'s shards),
    as the cluster does: the same draws, bit for bit, as the same files on the cluster. By
    default the rows are one block, as the same rows in any other format.

    Returns InferenceData with groups ``posterior`` (a regression's coefficients as ``beta``
    over the dimension ``coefficient``, whose coordinates are the data's column names —
    ``intercept``, ``age``, … —; ``log_sigma``, ``mu`` as variables of their own;
    continuous-time samplers: their draws on the time grid), ``sample_stats`` (ArviZ's names:
    lp, acceptance_rate, diverging, step_size, tree_depth, n_steps, energy; and tallmc's
    per-iteration counts n_terms, n_gradients, n_hessians, batch_size, …; a signed HMC-ECS
    run's ``sign``) and attrs: the sampler, per-datum evaluations, the data fraction per
    iteration, ``tallmc_summary`` (summary.json as JSON text: adapted tuning, evaluation
    totals, wall times, warnings; a signed run's sign-corrected summary) and ``tallmc_run``
    (the run as JSON). A continuous-time sampler with ``skeleton=True`` adds a ``skeleton``
    group (see :func:`tallmc.read_run`).
    """
    if not isinstance(model, (Model, CustomModel)):
        raise TypeError(f"model is a {type(model).__name__}; expected a tallmc model "
                        "(tallmc.LogisticRegression(X, y), tallmc.GaussianMean(y, sigma), "
                        "tallmc.CustomModel(log_terms, data, dim), …)")
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler is a {type(sampler).__name__}; expected a tallmc sampler "
                        "(tallmc.Nuts(), tallmc.HmcEcs(subsample=1000), …)")
    if init not in _INITS:
        raise ValueError(f"init = {init!r}: expected one of {', '.join(_INITS)}")
    draw = _progress.where_to_draw(progress)
    bar = _progress.TextBar(f"tallmc {sampler.command}") if draw == "python" else None
    spec = {
        "model": model.spec(),
        "data": (model.data_spec() if isinstance(model, Model)
                 else {"kind": "arrays", "label": model.label}),
        "sampler": _sampler_spec(model, sampler),
        "chains": _count("chains", chains, 1),
        "warmup": _count("warmup", warmup, 0),
        "draws": _count("draws", draws, 4),
        "seed": _count("seed", seed, 0),
        "init": init,
        "output": {"dir": None if output_dir is None else os.fspath(output_dir),
                   "overwrite": bool(overwrite)},
        "execution": {"threads": None if threads is None else _count("threads", threads, 1),
                      "progress": draw == "terminal", "report": False},
    }
    sharded = getattr(model, "sharded", None)
    if sharded is not None and engine is None:
        raise ValueError(f"the model's data are on a cluster ({sharded.label}); pass "
                         "engine=tallmc.dask.Engine(client)")
    if sharded is None and engine is not None:
        raise ValueError("engine= runs the passes where the data are; this model's data are "
                         "in memory here: make the model from a Dask DataFrame or Parquet "
                         "files, or leave engine out")
    lengths = getattr(model, "_shard_lengths", None) if by_shard else None
    if by_shard and lengths is None and sharded is None:
        raise ValueError("by_shard=True: the model's data have no shards (only "
                         "tallmc.read_parquet's files do)")
    try:
        if sharded is not None:
            source, shard_lengths = engine._source(model)
            result = _tallmc.run_on_shards(json.dumps(spec), source, shard_lengths, bar)
        elif isinstance(model, CustomModel):
            result = _tallmc.run_custom(
                json.dumps(spec), model._evaluate, model.num_rows, model.names,
                model.grad_terms is not None, model.hess_terms is not None, model.prior_mean,
                model.prior_sd, bar)
        else:
            result = _tallmc.run(json.dumps(spec), model.X, model.y, model.names, model.label,
                                 bar, lengths)
    except ValueError as e:
        raise ValueError(pythonic(str(e))) from None
    finally:
        if bar is not None:
            bar.close()
    summary = json.loads(result["summary"]) if result["summary"] else {}
    return inference_data(result["parameter_names"], result["draws"], result["lp"],
                          result["stat_names"], result["stats"], summary,
                          result.get("skeletons"))
