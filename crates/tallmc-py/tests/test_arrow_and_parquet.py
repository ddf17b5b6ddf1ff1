"""Arrow data and Parquet directories: a pyarrow Table, RecordBatch and Dataset, the same
directory read with `tallmc.read_parquet`, and the same numbers as a pandas DataFrame give the
same draws bit for bit and the same parameter names; shards are read in natural order
(part.2 before part.10) as the command reads them, and the command's draws on the directory
are Python's; nulls and columns that do not hold numbers are errors naming the column."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tallmc

from test_arviz_and_bits import REPO, draw_lines

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")

SHARDS = 11  # part.0 … part.10: natural order (…, 9, 10) and lexical order (0, 1, 10, 2, …) differ
SETTINGS = dict(chains=2, warmup=100, draws=100, seed=3)


def shard_columns(k: int, rng):
    """Shard k's columns: a float32, b int64, c bool, s text, y a 0/1 logistic response
    (int64); 30 + 3k rows, so that every shard has its own length."""
    n = 30 + 3 * k
    a = rng.normal(size=n).astype(np.float32)
    b = rng.integers(-3, 4, size=n)
    c = rng.random(n) < 0.4
    eta = 0.3 + 0.8 * a - 0.3 * b + 0.6 * c
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(np.int64)
    return {"y": y, "a": a, "b": b, "c": c, "s": [f"row {k}.{i}" for i in range(n)]}


def write_shards(folder):
    """part.0.parquet … part.10.parquet in `folder` (written in lexical order, as a listing
    would give them), plus files every reader skips; returns each shard's columns in natural
    order."""
    folder.mkdir()
    rng = np.random.default_rng(17)
    shards = [shard_columns(k, rng) for k in range(SHARDS)]
    for k in sorted(range(SHARDS), key=str):
        table = pa.table({"y": pa.array(shards[k]["y"], pa.int64()),
                          "a": pa.array(shards[k]["a"], pa.float32()),
                          "b": pa.array(shards[k]["b"], pa.int64()),
                          "c": pa.array(shards[k]["c"], pa.bool_()),
                          "s": pa.array(shards[k]["s"], pa.string())})
        pq.write_table(table, folder / f"part.{k}.parquet")
    (folder / "_SUCCESS").write_text("")
    (folder / ".part.3.parquet.crc").write_bytes(b"\0\1")
    return shards


@pytest.fixture(scope="module")
def shards_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parquet") / "claims"
    return folder, write_shards(folder)


def run(model, **kw):
    return tallmc.sample(model, tallmc.Nuts(), progress=False, **SETTINGS, **kw)


def test_tables_datasets_parquet_and_pandas_give_the_same_draws(shards_dir):
    pd = pytest.importorskip("pandas")
    folder, shards = shards_dir
    files = tallmc.parquet_files(folder)
    assert [os.path.basename(f) for f in files] == [f"part.{k}.parquet" for k in range(SHARDS)]
    numeric = pa.schema([("y", pa.int64()), ("a", pa.float32()), ("b", pa.int64()),
                         ("c", pa.bool_())])
    dataset = ds.dataset(files, format="parquet", schema=numeric)  # the text column left out
    table = pq.read_table(files).drop_columns(["s"])
    assert table.column("a").num_chunks == SHARDS
    batch = table.combine_chunks().to_batches()
    assert len(batch) == 1
    batch = batch[0]
    frame = pd.DataFrame({name: np.concatenate([s[name] for s in shards])
                          for name in ["y", "a", "b", "c"]})
    assert frame["a"].dtype == np.float32 and frame["c"].dtype == bool

    data = tallmc.read_parquet(folder)  # y = "y"; covariates: the columns holding numbers
    assert data.names == ["a", "b", "c"] and data.response == "y"
    assert data.skipped_columns == [("s", "string")]
    assert data.X.flags["C_CONTIGUOUS"] and data.X.dtype == np.float64
    assert [rows for _, rows in data.shards] == [len(s["y"]) for s in shards]

    models = {
        "read_parquet": tallmc.LogisticRegression(data),
        "read_parquet, y named": tallmc.LogisticRegression(data, "y"),
        "Table": tallmc.LogisticRegression(table, "y"),
        "Table and a pyarrow y": tallmc.LogisticRegression(table.drop_columns(["y"]),
                                                           table.column("y")),
        "RecordBatch": tallmc.LogisticRegression(batch, "y"),
        "Dataset": tallmc.LogisticRegression(dataset, "y"),
        "pandas": tallmc.LogisticRegression(frame, "y"),
    }
    expected_X = frame[["a", "b", "c"]].to_numpy(dtype=np.float64)
    for what, model in models.items():
        assert model.names == ["a", "b", "c"], what
        assert model.X.tobytes() == expected_X.tobytes(), what
        assert model.y.tobytes() == frame["y"].to_numpy(dtype=np.float64).tobytes(), what
    assert models["Dataset"].label == "pyarrow.dataset.FileSystemDataset"
    assert models["RecordBatch"].label == "pyarrow.RecordBatch"

    reference = run(models["pandas"])
    for what, model in models.items():
        idata = reference if what == "pandas" else run(model)
        assert list(idata.posterior["coefficient"].values) == ["intercept", "a", "b", "c"], what
        assert idata.posterior["beta"].values.tobytes() == \
            reference.posterior["beta"].values.tobytes(), what
        assert idata.sample_stats["lp"].values.tobytes() == \
            reference.sample_stats["lp"].values.tobytes(), what
    # read_parquet's data are recorded as the file (tallmc repeat reads it again); the others
    # as arrays named by what they were.
    recorded = json.loads(run(models["read_parquet"]).attrs["tallmc_run"])["data"]
    assert recorded == {"kind": "file", "path": str(folder.resolve()), "response": "y"}
    recorded = json.loads(reference.attrs["tallmc_run"])["data"]
    assert recorded == {"kind": "arrays", "label": "pandas.DataFrame"}


def test_glm_reads_tables_batches_and_datasets(shards_dir):
    pytest.importorskip("formulaic")
    folder, _ = shards_dir
    files = tallmc.parquet_files(folder)
    table = pq.read_table(files)
    forms = [table, table.combine_chunks().to_batches()[0], ds.dataset(files, format="parquet")]
    models = [tallmc.glm("y ~ a + b + c", data, family="logistic") for data in forms]
    plain = tallmc.LogisticRegression(tallmc.read_parquet(folder))
    for model in models:
        assert model.X.tobytes() == plain.X.tobytes() and model.y.tobytes() == plain.y.tobytes()
        assert model.names == ["a", "b", "c[T.True]"]  # formulaic codes a bool as a category
    assert models[2].label == "formula 'y ~ a + b + c' on pyarrow.dataset.FileSystemDataset"


def test_a_directory_is_read_in_natural_order_of_its_relative_paths(tmp_path):
    folder = tmp_path / "shards"
    (folder / "sub").mkdir(parents=True)
    (folder / "_tmp").mkdir()
    # Each file's rows hold their position in natural order; types differ between shards.
    order = [*(f"part.{k}.parquet" for k in range(SHARDS)), "part.010.parquet",
             "sub/part.1.parquet", "sub/part.2.parquet"]
    start = 0
    for rank, name in enumerate(order):
        rows = 2 + rank % 3
        ids = np.arange(start, start + rows)
        kind = pa.float32() if rank % 2 else pa.float64()
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                                 "y": pa.array(ids * 0.5, kind)}), folder / name)
        start += rows
    # Skipped: names starting with _ or . (also directories), files not named *.parquet.
    pq.write_table(pa.table({"id": [-1], "y": [0.0]}), folder / "_tmp" / "part.0.parquet")
    pq.write_table(pa.table({"id": [-1], "y": [0.0]}), folder / ".hidden.parquet")
    (folder / "_metadata").write_bytes(b"not parquet")
    (folder / "notes.txt").write_text("not data")

    files = tallmc.parquet_files(folder)
    assert [os.path.relpath(f, folder) for f in files] == order
    data = tallmc.read_parquet(folder, y="y", columns=["id"])
    np.testing.assert_array_equal(data.X[:, 0], np.arange(start))
    np.testing.assert_array_equal(data.y, np.arange(start) * 0.5)
    assert [os.path.relpath(f, folder) for f, _ in data.shards] == order
    # pyarrow's own listing is lexical (part.10 before part.2): pass tallmc's list instead.
    listed = ds.dataset(str(folder), exclude_invalid_files=True).files
    lexical = [os.path.relpath(f, folder) for f in listed]
    assert lexical.index("part.10.parquet") < lexical.index("part.2.parquet")
    ordered = ds.dataset(files).to_table(columns=["id"]).column("id").to_numpy()
    np.testing.assert_array_equal(ordered, np.arange(start))
    # One file is read as itself.
    one = tallmc.read_parquet(folder / "part.3.parquet", columns=["id"])
    assert one.X[:, 0].tolist() == [9.0, 10.0] and len(one.shards) == 1


def test_nulls_and_columns_that_are_not_numbers_are_named(tmp_path):
    pd = pytest.importorskip("pandas")
    table = pa.table({"y": [0.0, 1.0, 1.0, 0.0], "a": pa.array([1, 2, None, 4], pa.int64()),
                      "s": ["p", "q", "r", "s"]})
    numbers = table.drop_columns(["s"])
    full = pa.table({"y": [0.0, 1.0, 1.0, 0.0], "a": [1, 2, 3, 4], "s": ["p", "q", "r", "s"]})
    with pytest.raises(ValueError, match=r"^column 'a', row 2: missing value \(null\)"):
        tallmc.LogisticRegression(numbers, "y")
    with pytest.raises(ValueError, match=r"^column 'a', row 2: missing value"):
        tallmc.LogisticRegression(ds.dataset(numbers), "y")
    with pytest.raises(ValueError, match=r"^column 'y', row 1: missing value"):
        tallmc.LogisticRegression(full.select(["a"]), pa.chunked_array([[0.0], [None, 1.0, 0.0]]))
    # A column that does not hold numbers: a ValueError naming it, for tables and DataFrames.
    with pytest.raises(ValueError, match=r"^column 's' has type string; expected numbers"):
        tallmc.LogisticRegression(full, "y")
    with pytest.raises(ValueError, match=r"^column 's' has type string; expected numbers"):
        tallmc.LogisticRegression(ds.dataset(full), "y")
    with pytest.raises(ValueError, match=r"^column 's' has type .*; expected numbers"):
        tallmc.LogisticRegression(pd.DataFrame({"y": [0.0, 1.0], "a": [1.0, 2.0],
                                                "s": ["p", "q"]}), "y")
    pl = pytest.importorskip("polars")
    with pytest.raises(ValueError, match=r"^column 's' has type .*; expected numbers"):
        tallmc.LogisticRegression(pl.DataFrame({"y": [0.0, 1.0], "s": ["p", "q"]}), "y")
    # Exact conversion: a 64-bit integer float64 would round is refused.
    big = pa.table({"y": [0.0, 1.0], "a": pa.array([1, 2**53 + 1], pa.int64())})
    with pytest.raises(ValueError, match=r"^column 'a', row 1: integer 9007199254740993 is "
                                         r"beyond ±2\^53"):
        tallmc.LogisticRegression(big, "y")
    with pytest.raises(TypeError, match=r"y is missing"):
        tallmc.LogisticRegression(full.select(["a"]))

    # Parquet: the file, the column and the row, in the file and overall.
    folder = tmp_path / "bad"
    folder.mkdir()
    for k in range(3):
        a = pa.array([1.0, None if k == 2 else 2.0, 3.0])
        pq.write_table(pa.table({"y": [0.0, 1.0, 0.0], "a": a, "s": ["p", "q", "r"]}),
                       folder / f"part.{k}.parquet")
    with pytest.raises(ValueError, match=r"part\.2\.parquet: column 'a', row 1 of this file "
                                         r"\(row 7 overall\): missing value \(null\)"):
        tallmc.read_parquet(folder)
    with pytest.raises(ValueError, match=r"part\.0\.parquet: column 's' has type string; "
                                         r"expected numbers .*columns=\[…\] to leave it out"):
        tallmc.read_parquet(folder, columns=["s"])
    with pytest.raises(ValueError, match=r"part\.0\.parquet: no column 'z' \(the response\); "
                                         r"the file's columns are: y \(double\), a \(double\), "
                                         r"s \(string\)"):
        tallmc.read_parquet(folder, y="z")
    nan = tmp_path / "nan.parquet"
    pq.write_table(pa.table({"y": [0.0, float("nan")]}), nan)
    with pytest.raises(ValueError, match=r"column 'y', row 1 of this file \(row 1 overall\): "
                                         r"value nan is not finite"):
        tallmc.read_parquet(nan)
    with pytest.raises(TypeError, match=r"columns = 'a': expected a list"):
        tallmc.read_parquet(folder, columns="a")
    with pytest.raises(ValueError, match=r"'a' is named twice"):
        tallmc.read_parquet(folder, columns=["a", "a"])
    with pytest.raises(ValueError, match=r"other than the response 'y'"):
        tallmc.read_parquet(folder, columns=["y"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty: no Parquet files in this directory"):
        tallmc.read_parquet(tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        tallmc.read_parquet(tmp_path / "nowhere")
    good = tallmc.read_parquet(folder / "part.0.parquet")
    with pytest.raises(TypeError, match=r"X is tallmc.Data read with its response 'y'"):
        tallmc.LogisticRegression(good, good.y)


def test_gaussian_models_and_offsets_take_read_parquet_data(tmp_path):
    path = tmp_path / "counts.parquet"
    rng = np.random.default_rng(2)
    years = rng.uniform(0.5, 2.0, size=400)
    x = rng.normal(size=400)
    y = rng.poisson(years * np.exp(0.2 + 0.5 * x))
    pq.write_table(pa.table({"claims": y, "x": x, "years": years}), path)
    data = tallmc.read_parquet(path, y="claims")
    assert data.names == ["x", "years"]
    model = tallmc.PoissonRegression(data, exposure="years")
    assert model.data_spec()["kind"] == "file"
    idata = run(model)
    assert list(idata.posterior["coefficient"].values) == ["intercept", "x"]
    by_array = tallmc.PoissonRegression(data.X[:, :1].copy(), data.y, exposure=years)
    assert by_array.data_spec() == {"kind": "arrays", "label": "NumPy arrays"}
    np.testing.assert_array_equal(run(by_array).posterior["beta"].values,
                                  idata.posterior["beta"].values)
    # glm: on read_parquet's data and on a Dataset, with the exposure a column of either.
    for source in [data, ds.dataset(path)]:
        by_formula = tallmc.glm("claims ~ x", source, family="poisson", exposure="years")
        assert by_formula.X.tobytes() == model.X.tobytes() and by_formula.names == ["x", "years"]
    mean = tallmc.GaussianMean(data, sigma=1.0)
    assert mean.y is data.y and mean.data_spec()["response"] == "claims"


def parquet_command():
    """The newest `tallmc` command built (TALLMC_BIN, else target/release or target/debug),
    if it reads Parquet."""
    found = os.environ.get("TALLMC_BIN")
    candidates = [found] if found else [
        str(p) for p in (REPO / "target" / "release" / "tallmc",
                         REPO / "target" / "debug" / "tallmc") if p.exists()]
    if not candidates:
        pytest.skip("the tallmc command is not built (cargo build -p tallmc-cli)")
    command = max(candidates, key=os.path.getmtime)
    flags = subprocess.run([command, "sample", "nuts", "--help"], capture_output=True,
                           text=True).stdout
    if "--columns" not in flags:
        pytest.skip(f"{command} predates Parquet input (rebuild: cargo build -p tallmc-cli)")
    return command


def test_the_command_on_the_directory_gives_pythons_draws(shards_dir, tmp_path):
    command = parquet_command()
    folder, _ = shards_dir
    for columns in [None, ["c", "a"]]:
        tag = "all" if columns is None else "picked"
        py_out, cli_out = tmp_path / f"py-{tag}", tmp_path / f"cli-{tag}"
        data = tallmc.read_parquet(folder, columns=columns)
        run(tallmc.LogisticRegression(data), output_dir=py_out)
        argv = [command, "sample", "nuts", "--model", "logistic", "--data", str(folder),
                "--y", "y", "--out", str(cli_out), "--chains", "2", "--warmup", "100",
                "--draws", "100", "--seed", "3", "--no-report", "--no-progress"]
        if columns:
            argv += ["--columns", ",".join(columns)]
        subprocess.run(argv, check=True, capture_output=True)
        for k in (1, 2):
            assert draw_lines(py_out / f"chain_{k}.csv") == draw_lines(cli_out / f"chain_{k}.csv")
        names = ["intercept", *(columns or ["a", "b", "c"])]
        header = draw_lines(cli_out / "chain_1.csv")[0].split(",")
        assert header[-len(names):] == names


def test_the_command_converts_the_directory_into_the_rows_read_parquet_reads(shards_dir,
                                                                             tmp_path):
    command = parquet_command()
    folder, _ = shards_dir
    subprocess.run([command, "convert", str(folder), "--y", "y", "--out",
                    str(tmp_path / "claims.bin"), "--no-progress"], check=True,
                   capture_output=True)
    # The README's recipe: the converted file, memory-mapped, read in place.
    header = json.loads((tmp_path / "claims.json").read_text())
    n, d = header["n"], header["d"]
    X = np.memmap(tmp_path / "claims.bin", "<f8", "r", offset=header["x_offset_bytes"],
                  shape=(n, d))
    y = np.memmap(tmp_path / "claims.bin", "<f8", "r", offset=header["y_offset_bytes"],
                  shape=(n,))
    data = tallmc.read_parquet(folder)
    assert header["covariate_names"] == data.names
    assert X.tobytes() == data.X.tobytes() and y.tobytes() == data.y.tobytes()
    mapped = tallmc.LogisticRegression(X, y)
    assert mapped.X is X
    assert run(mapped).posterior["beta"].values.tobytes() == \
        run(tallmc.LogisticRegression(data)).posterior["beta"].values.tobytes()


def test_pyarrow_is_imported_only_for_arrow_data(monkeypatch, tmp_path):
    code = ("import sys, numpy as np, tallmc\n"
            "tallmc.LogisticRegression(np.zeros((3, 2)), np.zeros(3))\n"
            "tallmc.parquet_files(sys.argv[1])\n"
            "print('pyarrow' in sys.modules)")
    pq.write_table(pa.table({"y": [0.0]}), tmp_path / "part.0.parquet")
    package = os.path.dirname(os.path.dirname(tallmc.__file__))  # where this tallmc is
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [package, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, env=env, check=True).stdout
    assert out.strip() == "False"
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"read_parquet needs pyarrow.*pip install pyarrow"):
        tallmc.read_parquet(tmp_path)
