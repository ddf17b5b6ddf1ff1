"""Data as users keep it (pandas and polars DataFrames, pyarrow tables: parameters named after
their columns), and runs that end badly (SIGTERM, SIGKILL) leave files that ArviZ and
`tallmc.read_run` read."""

import json
import os
import signal
import subprocess
import time

import arviz as az
import numpy as np
import pytest

import tallmc

from conftest import logistic_data
from test_arviz_and_bits import tallmc_binary


def people(n=3000, seed=5):
    """Columns age, income and a 0/1 outcome y of a logistic model with an intercept."""
    rng = np.random.default_rng(seed)
    age = rng.normal(size=n)
    income = rng.normal(size=n)
    p = 1 / (1 + np.exp(-(0.5 + age - 0.5 * income)))
    y = (rng.random(n) < p).astype(np.float64)
    return {"y": y, "age": age, "income": income}


def check_names(idata):
    assert list(idata.posterior["coefficient"].values) == ["intercept", "age", "income"]
    summary = json.loads(idata.attrs["tallmc_summary"])
    assert summary["parameter_names"] == ["intercept", "age", "income"]
    assert [p["name"] for p in summary["parameters"]] == ["intercept", "age", "income"]


def sample(model):
    return tallmc.sample(model, tallmc.Nuts(), chains=2, warmup=150, draws=150, seed=3,
                         progress=False)


def test_a_pandas_dataframe_names_the_parameters():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(people())
    by_name = sample(tallmc.LogisticRegression(df, "y"))
    check_names(by_name)
    by_series = sample(tallmc.LogisticRegression(df[["age", "income"]], df["y"]))
    np.testing.assert_array_equal(by_name.posterior["beta"].values,
                                  by_series.posterior["beta"].values)
    # The same numbers as a NumPy array give the same draws.
    X = np.ascontiguousarray(df[["age", "income"]].to_numpy())
    plain = sample(tallmc.LogisticRegression(X, df["y"].to_numpy()))
    np.testing.assert_array_equal(plain.posterior["beta"].values, by_name.posterior["beta"].values)


def test_a_polars_dataframe_and_a_pyarrow_table_name_the_parameters():
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    data = people()
    polars = sample(tallmc.LogisticRegression(pl.DataFrame(data), "y"))
    check_names(polars)
    arrow = sample(tallmc.LogisticRegression(pa.table(data), "y"))
    check_names(arrow)
    np.testing.assert_array_equal(polars.posterior["beta"].values, arrow.posterior["beta"].values)


def test_a_c_contiguous_float64_array_is_read_in_place_and_a_frame_is_copied_once():
    pd = pytest.importorskip("pandas")
    X, y = logistic_data(100, 2, 1)
    model = tallmc.LogisticRegression(X, y)
    assert model.X is X  # read in place by the extension
    frame = tallmc.LogisticRegression(pd.DataFrame(X, columns=["a", "b"]), y)
    assert frame.X.flags["C_CONTIGUOUS"] and frame.X.dtype == np.float64
    assert frame.names == ["a", "b"]
    with pytest.raises(ValueError, match=r"y = 'z': no such column"):
        tallmc.LogisticRegression(pd.DataFrame(X, columns=["a", "b"]), "z")


def start_long_run(tmp_path, out):
    """A two-chain RWM run of 10⁷ draws on a 20,000-row logistic regression, started in the
    background; returns once both chains are drawing."""
    X, y = logistic_data(20_000, 3, 7)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    child = subprocess.Popen(
        [tallmc_binary(), "sample", "rwm", "--model", "logistic", "--data",
         str(tmp_path / "X.npy"), "--y-npy", str(tmp_path / "y.npy"), "--out", str(out),
         "--chains", "2", "--threads", "2", "--warmup", "50", "--draws", "10000000",
         "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.monotonic()

    def drawing(k):
        path = out / f"chain_{k}.csv"
        return path.exists() and sum(1 for l in open(path) if not l.startswith("#")) > 20

    while not (drawing(1) and drawing(2)):
        if time.monotonic() - start > 60:
            child.kill()
            pytest.fail("the run did not start drawing")
        time.sleep(0.05)
    return child


def test_sigterm_leaves_a_summary_and_files_that_arviz_reads(tmp_path):
    out = tmp_path / "term"
    child = start_long_run(tmp_path, out)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    idata = az.from_cmdstan(posterior=[str(out / "chain_1.csv"), str(out / "chain_2.csv")])
    draws = summary["draws_per_chain"][0]
    assert idata.posterior["intercept"].shape == (2, draws)
    ours = tallmc.read_run(out)
    np.testing.assert_array_equal(ours.posterior["beta"].sel(coefficient="intercept").values,
                                  idata.posterior["intercept"].values)


def test_sigkill_mid_run_leaves_whole_rows_that_read_run_reads(tmp_path):
    out = tmp_path / "kill"
    child = start_long_run(tmp_path, out)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert not (out / "summary.json").exists()
    # A kill can leave one unfinished last line; make sure there is one to skip.
    with open(out / "chain_2.csv", "a") as f:
        f.write("-1.5,0.25,1")
    rows = [
        [l for l in open(out / f"chain_{k}.csv") if l.endswith("\n") and not l.startswith("#")]
        for k in (1, 2)
    ]
    whole = min(len(r) for r in rows) - 1  # less the header
    idata = tallmc.read_run(out)
    assert idata.posterior["beta"].shape == (2, whole, 4)
    assert list(idata.posterior["coefficient"].values) == ["intercept", "x0", "x1", "x2"]
    assert np.isfinite(idata.posterior["beta"].values).all()
    assert idata.attrs["model"] == "logistic"


def test_nothing_is_written_without_output_dir_and_an_existing_one_is_refused(tmp_path):
    X, y = logistic_data(500, 2, 4)
    model = tallmc.LogisticRegression(X, y)
    before = set(os.listdir(tmp_path))
    tallmc.sample(model, tallmc.Nuts(), chains=1, warmup=20, draws=20, progress=False)
    assert set(os.listdir(tmp_path)) == before
    out = tmp_path / "run"
    tallmc.sample(model, tallmc.Nuts(), chains=2, warmup=20, draws=20, progress=False,
                  output_dir=out)
    first = (out / "chain_1.csv").read_bytes()
    with pytest.raises(ValueError, match=r"not empty.*overwrite"):
        tallmc.sample(model, tallmc.Nuts(), chains=1, warmup=20, draws=20, progress=False,
                      output_dir=out, seed=2)
    assert (out / "chain_1.csv").read_bytes() == first
    tallmc.sample(model, tallmc.Nuts(), chains=1, warmup=20, draws=20, progress=False,
                  output_dir=out, seed=2, overwrite=True)
    assert not (out / "chain_2.csv").exists()
