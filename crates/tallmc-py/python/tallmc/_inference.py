"""ArviZ InferenceData from a run's arrays, the same whether they come from memory
(:func:`tallmc.sample`) or from a run's files (:func:`tallmc.read_run`).

Posterior variables: a regression's coefficients are one variable ``beta`` with dimension
``coefficient`` whose coordinates are the data's column names (``intercept``, ``age``, …);
every other parameter (``log_sigma``, ``log_phi``, ``mu``) is a variable of its own.
Parameters named ``name.1``, ``name.2``, … (models of the library's Rust API) are stacked into
``name``.
"""

from __future__ import annotations

import json
import re

import numpy as np

# CmdStan's stat columns under ArviZ's standard names (as arviz.from_cmdstan names them).
_STAT_NAMES = {
    "lp__": "lp",
    "accept_stat__": "acceptance_rate",
    "divergent__": "diverging",
    "stepsize__": "step_size",
    "treedepth__": "tree_depth",
    "n_leapfrog__": "n_steps",
    "energy__": "energy",
    # HMC-ECS's estimate of the log-likelihood is a per-draw statistic, not ArviZ's pointwise
    # log_likelihood group: it keeps a name of its own.
    "log_likelihood__": "log_likelihood_estimate",
}
_INDEXED = re.compile(r"^(.*)\.(\d+)$")
#: The families whose parameters are regression coefficients (and then log σ or log φ).
_REGRESSIONS = ("logistic", "linear", "probit", "poisson", "negative-binomial", "robust")
#: Parameters that are not coefficients.
_SCALARS = ("log_sigma", "log_phi")


def group_parameters(names, values, family: str, prefix: str = ""):
    """Variables (name → (dims, array)) of ``values`` (…, parameter) named ``names``:
    regression coefficients stacked as ``beta`` over ``coefficient``, ``name.k`` columns
    stacked as ``name``, the rest one variable each; ``prefix`` is put before every
    variable's name (``v_`` for velocities). Returns the variables and their coordinates."""
    variables, coords, indexed = {}, {}, {}
    if family in _REGRESSIONS:
        coefficients = [j for j, n in enumerate(names) if n not in _SCALARS]
        if coefficients:
            dim = f"{prefix}coefficient" if prefix else "coefficient"
            coords[dim] = [names[j] for j in coefficients]
            first, last = coefficients[0], coefficients[-1]
            contiguous = coefficients == list(range(first, last + 1))
            # A slice is a view (no copy of 10⁶ draws); a list of columns would copy them.
            picked = values[..., first:last + 1] if contiguous else values[..., coefficients]
            variables[prefix + "beta"] = (dim, picked)
        rest = [j for j, n in enumerate(names) if n in _SCALARS]
    else:
        rest = range(len(names))
    for j in rest:
        m = _INDEXED.match(names[j])
        if m:
            indexed.setdefault(m.group(1), []).append((int(m.group(2)), j))
        else:
            variables[prefix + names[j]] = (None, values[..., j])
    for name, parts in indexed.items():
        parts.sort()
        dim = f"{prefix}{name}_dim_0"
        coords[dim] = [k for k, _ in parts]
        variables[prefix + name] = (dim, values[..., [j for _, j in parts]])
    return variables, coords


def _dataset_dict(variables, lead_dims):
    return {name: (list(lead_dims) + ([dim] if dim else []), v)
            for name, (dim, v) in variables.items()}


def inference_data(names, draws, lp, stat_names, stats, summary: dict, skeletons=None):
    """InferenceData of one run: ``draws`` (chains × draws × d), ``lp`` (chains × draws),
    ``stats`` (chains × draws × stats) named ``stat_names``; ``summary`` is the run's
    summary.json; ``skeletons`` (optional) one dict per chain with ``time``, ``event``,
    ``coordinate``, ``position`` and ``velocity``."""
    import arviz as az
    import xarray as xr

    family = str(summary.get("model", ""))
    variables, coords = group_parameters(names, draws, family)
    chains, n_draws = draws.shape[:2]
    base = {"chain": np.arange(chains), "draw": np.arange(n_draws)}
    posterior = xr.Dataset(_dataset_dict(variables, ("chain", "draw")), coords={**base, **coords})
    stat_vars = {"lp": (["chain", "draw"], lp)}
    for j, name in enumerate(stat_names):
        key = _STAT_NAMES.get(name, name.removesuffix("__"))
        column = stats[:, :, j]
        stat_vars[key] = (["chain", "draw"], column.astype(bool) if key == "diverging" else column)
    sample_stats = xr.Dataset(stat_vars, coords=base)
    idata = az.InferenceData(posterior=posterior, sample_stats=sample_stats)
    if skeletons:
        idata.add_groups(skeleton=_skeleton_group(names, family, skeletons),
                         warn_on_custom_groups=False)
    totals = summary.get("totals", {})
    attrs = {
        "inference_library": "tallmc",
        "sampler": str(summary.get("sampler", "")),
        "model": family,
        "num_rows": int(summary.get("n", 0)),
        "interrupted": int(bool(summary.get("interrupted", False))),
        "data_fraction_per_iteration": float(totals.get("data_fraction_per_iteration", 1.0)),
        "evaluations_per_draw": float(totals.get("evals_per_draw", 0.0)),
        "evaluations_total": int(totals.get("evals", {}).get("total", 0)),
        "tallmc_summary": json.dumps(summary),
        "tallmc_run": json.dumps(summary.get("spec", {})),
    }
    idata.attrs.update(attrs)
    for group in ("posterior", "sample_stats"):
        getattr(idata, group).attrs.update(attrs)
    return idata


def _skeleton_group(names, family, skeletons):
    """The ``skeleton`` group: dims (chain, event), rows past a chain's ``num_events`` padded
    (NaN, kind "")."""
    import xarray as xr

    chains = len(skeletons)
    counts = [len(s["time"]) for s in skeletons]
    longest = max(counts) if counts else 0
    d = len(names)
    time = np.full((chains, longest), np.nan)
    coordinate = np.full((chains, longest), -1, dtype=np.int64)
    kinds = np.full((chains, longest), "", dtype=object)
    position = np.full((chains, longest, d), np.nan)
    velocity = np.full((chains, longest, d), np.nan)
    for c, s in enumerate(skeletons):
        k = counts[c]
        time[c, :k] = s["time"]
        coordinate[c, :k] = s["coordinate"]
        kinds[c, :k] = list(s["event"])
        position[c, :k] = np.asarray(s["position"]).reshape(k, d)
        velocity[c, :k] = np.asarray(s["velocity"]).reshape(k, d)
    data = {"time": (["chain", "event"], time), "kind": (["chain", "event"], kinds.astype(str)),
            "coordinate": (["chain", "event"], coordinate),
            "num_events": (["chain"], np.array(counts))}
    coords = {"chain": np.arange(chains), "event": np.arange(longest)}
    for values, prefix in ((position, ""), (velocity, "v_")):
        variables, extra = group_parameters(names, values, family, prefix)
        data.update(_dataset_dict(variables, ("chain", "event")))
        coords.update(extra)
    return xr.Dataset(data, coords=coords)
