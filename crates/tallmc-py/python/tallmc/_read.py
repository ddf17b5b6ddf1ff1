"""`tallmc.read_run`: InferenceData of a run's output directory (the command's, or
:func:`tallmc.sample`'s with ``output_dir``), read as it is — also a run that was killed
(SIGKILL, a power cut): every whole row is read, an unfinished last line is left out, and
chains of different lengths are cut to the shortest."""

from __future__ import annotations

import csv
import io
import json
import os
import warnings

import numpy as np

from ._inference import inference_data

__all__ = ["read_run"]


def _whole_lines(path: str) -> list[str]:
    """The file's lines that end with a newline (a killed run may leave one unfinished last
    line, which could hold a cut-off number)."""
    with open(path, newline="") as f:
        text = f.read()
    lines = text.split("\n")
    return lines[:-1]  # the part after the last newline is empty or unfinished


def _read_csv(path: str, text_column=None):
    """Column names and the numbers (rows × columns) of one tallmc CSV file (comment lines
    start with ``#``); with ``text_column``, that column is read as strings, returned third,
    and left out of the numbers (``NaN`` there). Rows without the header's number of fields
    (a row cut short) are left out.

    NumPy's text reader converts each field with Python's correctly rounded string-to-double,
    so the numbers (written in Rust's shortest round-trip form) are the run's bits."""
    lines = [l.rstrip("\r") for l in _whole_lines(path)]
    body = [l for l in lines if l.strip() and not l.startswith("#")]
    if not body:
        raise ValueError(f"{path}: no header line")
    header = next(csv.reader([body[0]]))
    rows = [l for l in body[1:] if l.count(",") == len(header) - 1]
    text_at = None if text_column is None else header.index(text_column)
    numeric = [j for j in range(len(header)) if j != text_at]
    values = np.full((len(rows), len(header)), np.nan)
    if rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            numbers = np.loadtxt(io.StringIO("\n".join(rows)), dtype=np.float64, delimiter=",",
                                 usecols=numeric, ndmin=2)
        values[:, numeric] = numbers.reshape(len(rows), len(numeric))
    if text_at is None:
        return header, values
    text = [r.split(",")[text_at] for r in rows]
    return header, values, text


def _skeletons(directory: str, chains: int, names):
    """Each chain's skeleton (skeleton_1.csv …) as the dicts :func:`inference_data` takes, or
    None without them."""
    paths = [os.path.join(directory, f"skeleton_{k}.csv") for k in range(1, chains + 1)]
    if not all(os.path.exists(p) for p in paths):
        return None
    out = []
    for path in paths:
        header, values, kinds = _read_csv(path, text_column="event")
        column = {name: j for j, name in enumerate(header)}
        position = values[:, [column[n] for n in names]]
        velocity = values[:, [column["v." + n] for n in names]]
        out.append({"time": values[:, column["time"]], "event": kinds,
                    "coordinate": values[:, column["coordinate"]].astype(np.int64),
                    "position": position, "velocity": velocity})
    return out


def read_run(directory):
    """InferenceData of a run's output directory (chain_1.csv …, summary.json): what
    :func:`tallmc.sample` returns, also for runs of the command, and for runs that were
    interrupted or killed (whole rows only; chains cut to the shortest).

    If the directory holds skeleton_1.csv … (a continuous-time run with ``--skeleton``), they
    become the group ``skeleton``, dims ``(chain, event)``: ``time``, ``kind`` (start, bounce,
    flip, refresh, divergence, end…), ``coordinate`` (the flipped coordinate + 1 for Zig-Zag,
    else 0), the position at the event (named as the posterior's variables) and the velocity
    after it (``v_`` before the name). Chains have different numbers of events: ``num_events``
    has each chain's, and the rows past it are padded (NaN, kind "").
    """
    directory = os.fspath(directory)
    summary_path = os.path.join(directory, "summary.json")
    summary = {}
    if os.path.exists(summary_path):  # a killed run has none
        with open(summary_path) as f:
            summary = json.load(f)
    tables = []
    k = 1
    while os.path.exists(os.path.join(directory, f"chain_{k}.csv")):
        tables.append(_read_csv(os.path.join(directory, f"chain_{k}.csv")))
        k += 1
    if not tables:
        raise ValueError(f"{directory}: no chain_1.csv")
    header = tables[0][0]
    draws = min(v.shape[0] for _, v in tables)  # an interrupted run's chains may differ
    table = np.stack([v[:draws] for _, v in tables])  # (chain, draw, column)
    stat_at = [j for j, n in enumerate(header) if n.endswith("__") and n != "lp__"]
    param_at = [j for j, n in enumerate(header) if not n.endswith("__")]
    names = [header[j] for j in param_at]
    if not summary.get("model"):
        summary["model"] = _family_from_comments(os.path.join(directory, "chain_1.csv"))
    lp = table[:, :, header.index("lp__")] if "lp__" in header else table[:, :, 0] * np.nan
    return inference_data(names, table[:, :, param_at], lp, [header[j] for j in stat_at],
                          table[:, :, stat_at], summary,
                          _skeletons(directory, len(tables), names))


def _family_from_comments(path: str) -> str:
    """The ``# model = …`` comment of a chain's file (for a run killed before its summary)."""
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            key, _, value = line[1:].partition("=")
            if key.strip() == "model":
                return value.strip()
    return ""
