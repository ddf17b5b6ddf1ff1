"""ArviZ reads what `tallmc.sample` returns as any sampler's output (summary, ESS, R-hat, trace
plots, a netCDF round trip), and the draws are the `tallmc` command's, bit for bit, on the same
data saved as .npy files (the binary's run reads the files; Python's reads the arrays)."""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import arviz as az
import numpy as np
import pytest

import tallmc

REPO = pathlib.Path(__file__).resolve().parents[3]


def draw_lines(path):
    return [l for l in pathlib.Path(path).read_text().splitlines() if l and not l.startswith("#")]


def test_arviz_functions_work_and_a_netcdf_round_trip_keeps_everything(tmp_path, logistic_npy):
    X, y, _ = logistic_npy
    idata = tallmc.sample(tallmc.LogisticRegression(X, y), tallmc.HmcEcs(subsample=400),
                          chains=2, warmup=200, draws=300, seed=4, progress=False)
    assert idata.posterior["beta"].shape == (2, 300, 6)  # intercept + 5 covariates
    names = ["intercept", "x0", "x1", "x2", "x3", "x4"]
    assert list(idata.posterior["coefficient"].values) == names
    for name in ["lp", "acceptance_rate", "diverging", "step_size", "n_steps", "tree_depth",
                 "n_terms", "n_gradients", "batch_size"]:
        assert name in idata.sample_stats, name
    assert idata.sample_stats["diverging"].dtype == bool
    assert (idata.sample_stats["batch_size"] == 400).all()
    summary = az.summary(idata)
    assert list(summary.index[:2]) == ["beta[intercept]", "beta[x0]"]
    assert float(az.rhat(idata)["beta"].max()) < 1.05
    assert float(az.ess(idata)["beta"].min()) > 50
    import matplotlib
    matplotlib.use("Agg")
    assert az.plot_trace(idata, var_names=["beta"]).shape[0] == 1
    path = tmp_path / "run.nc"
    idata.to_netcdf(path)
    back = az.from_netcdf(path)
    np.testing.assert_array_equal(back.posterior["beta"].values, idata.posterior["beta"].values)
    for key in ["sampler", "data_fraction_per_iteration", "evaluations_total", "tallmc_summary",
                "tallmc_run"]:
        assert back.attrs[key] == idata.attrs[key], key
    tuned = json.loads(idata.attrs["tallmc_summary"])["tuning"]
    assert len(tuned) == 2 and all("step_size" in json.dumps(t) for t in tuned)
    run = json.loads(idata.attrs["tallmc_run"])
    assert run["sampler"]["name"] == "hmc-ecs" and run["sampler"]["subsample"] == 400
    assert run["output"]["dir"] is None


def tallmc_binary():
    """The command built by cargo (CI's `cargo test` builds target/debug/tallmc)."""
    found = os.environ.get("TALLMC_BIN")
    if found:
        return found
    for profile in ["release", "debug"]:
        candidate = REPO / "target" / profile / "tallmc"
        if candidate.exists():
            return str(candidate)
    pytest.skip("the tallmc command is not built (cargo build -p tallmc-cli)")


def test_same_seed_same_draws_as_the_command(tmp_path, logistic_npy, monkeypatch):
    X, y, folder = logistic_npy
    # Nothing is written without output_dir: not even a temporary file.
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("TMPDIR", str(locked))
    monkeypatch.setattr(tempfile, "tempdir", None)
    settings = dict(chains=2, warmup=100, draws=100, seed=9)
    for sampler, flags in [(tallmc.HmcEcs(subsample=300, blocks=30),
                            ["hmc-ecs", "--subsample", "300", "--blocks", "30"]),
                           (tallmc.Sghmc(cv=True, batch=200, step_size=0.02),
                            ["sghmc", "--cv", "--batch", "200", "--step-size", "0.02"])]:
        in_memory = tallmc.sample(tallmc.LogisticRegression(X, y), sampler, progress=False,
                                  **settings)
        py_out = tmp_path / f"py-{sampler.command}"
        tallmc.sample(tallmc.LogisticRegression(X, y), sampler, progress=False,
                      output_dir=py_out, **settings)
        cli_out = tmp_path / f"cli-{sampler.command}"
        argv = (["sample"] + flags
                + ["--model", "logistic", "--prior-sd", "10.0",
                   "--data", str(folder / "X.npy"), "--y-npy", str(folder / "y.npy"),
                   "--out", str(cli_out), "--chains", "2", "--warmup", "100", "--draws", "100",
                   "--seed", "9", "--no-report", "--no-progress"])
        subprocess.run([tallmc_binary()] + argv, check=True, capture_output=True)
        assert sorted(os.listdir(py_out)) == sorted(os.listdir(cli_out))
        for k in (1, 2):
            assert draw_lines(py_out / f"chain_{k}.csv") == draw_lines(cli_out / f"chain_{k}.csv")
        read = tallmc.read_run(cli_out)
        assert read.posterior["beta"].values.tobytes() == in_memory.posterior["beta"].values.tobytes()
        assert set(read.sample_stats.data_vars) == set(in_memory.sample_stats.data_vars)
        for stat in read.sample_stats.data_vars:
            np.testing.assert_array_equal(read.sample_stats[stat].values,
                                          in_memory.sample_stats[stat].values)
        # read_run's numbers are the CSV's, each parsed by Python's correctly rounded float().
        lines = draw_lines(cli_out / "chain_2.csv")
        header = lines[0].split(",")
        names = ["intercept", "x0", "x1", "x2", "x3", "x4"]
        first = [header.index(n) for n in names]
        by_float = np.array([[float(l.split(",")[j]) for j in first] for l in lines[1:]])
        assert by_float.shape == (100, 6)
        assert by_float.tobytes() == in_memory.posterior["beta"].values[1].tobytes()
    assert os.listdir(locked) == []
