"""The Dask engine on a LocalCluster of 2 worker processes (the API of a many-machine cluster):
the set-up over shards the workers hold equals, bit for bit, the same set-up here over the same
shards (standardized covariates too: their moments over all shards come first); the driver
holds only Newton's warm-start rows; bad shards and misuse are clear errors."""

import json
import os

import numpy as np
import pytest

import tallmc

distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
import tallmc.dask  # noqa: E402


@pytest.fixture(scope="module")
def engine():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield tallmc.dask.Engine(client)
    client.close()
    cluster.close()


def write_shards(directory, columns, bounds):
    """Parquet shards part.0 … of the columns (a dict of arrays) cut at ``bounds``."""
    os.makedirs(directory, exist_ok=True)
    for s in range(len(bounds) - 1):
        a, b = bounds[s], bounds[s + 1]
        pq.write_table(pa.table({k: v[a:b] for k, v in columns.items()}),
                       os.path.join(directory, f"part.{s}.parquet"))
    return tallmc.parquet_files(directory)


def logistic_columns(n, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + X @ [0.5, -1.0, 0.2])))).astype(np.float64)
    return {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}


def same_bits(dask, local):
    assert dask.names == local.names
    for name in ("mode", "covariance"):
        assert getattr(dask, name).tobytes() == getattr(local, name).tobytes(), name
    assert dask.log_density == local.log_density
    assert dask.newton_iterations == local.newton_iterations
    assert dask.evaluations == local.evaluations
    cd, cl = dask.control_variate, local.control_variate
    assert cd["order"] == cl["order"] and cd["value"] == cl["value"]
    for part in ("gradient", "hessian"):
        assert cd[part].tobytes() == cl[part].tobytes(), part
    assert dask.shards == local.shards
    md, ml = dask.column_moments, local.column_moments
    assert (md is None) == (ml is None)
    if md is not None:
        for part in ("mean", "sd"):
            assert md[part].tobytes() == ml[part].tobytes(), part


def test_parquet_shards_on_the_cluster_give_the_local_setup_bit_for_bit(engine, tmp_path):
    # 450,000 rows: Newton's warm start reads every 4th row, fetched from the workers.
    n = 450_000
    files = write_shards(tmp_path / "logit", logistic_columns(n), [0, 100_000, 101_000, 300_000, n])
    on_cluster = tallmc.setup(tallmc.LogisticRegression(files, y="y"), engine=engine)
    here = tallmc.setup(tallmc.LogisticRegression(tallmc.read_parquet(tmp_path / "logit")),
                        by_shard=True)
    same_bits(on_cluster, here)
    assert on_cluster.shards == 4 and on_cluster.rows_on_driver == 112_500
    assert here.rows_on_driver == n
    # A second set-up reuses the shards already in the workers' memory.
    again = tallmc.setup(tallmc.LogisticRegression(files, y="y"), engine=engine)
    same_bits(again, here)
    # The mode is the logistic regression's: the gradient of the log posterior vanishes there.
    cv = on_cluster.control_variate
    prior_grad = -on_cluster.mode / 10.0**2
    assert np.abs(cv["gradient"] + prior_grad).max() < 1e-6 * np.abs(cv["hessian"]).max()


def test_poisson_with_exposure_and_a_dask_dataframe(engine, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    n = 3_000
    x = rng.normal(size=n)
    t = rng.uniform(0.5, 2.0, size=n)
    y = rng.poisson(t * np.exp(0.2 + 0.5 * x)).astype(np.float64)
    frame = pd.DataFrame({"x": x, "t": t, "y": y})
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    lengths = [int(len(ddf.get_partition(k))) for k in range(ddf.npartitions)]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    files = write_shards(tmp_path / "counts", {"x": x, "t": t, "y": y}, bounds)
    model = tallmc.PoissonRegression(ddf, y="y", exposure="t")
    on_cluster = tallmc.setup(model, engine=engine)
    here = tallmc.setup(tallmc.PoissonRegression(tallmc.read_parquet(tmp_path / "counts"),
                                                 exposure="t"), by_shard=True)
    same_bits(on_cluster, here)
    assert on_cluster.names == ["intercept", "x"]
    assert on_cluster.rows_on_driver == 1  # no warm start on 3,000 rows: the first row only
    assert abs(on_cluster.mode[1] - 0.5) < 5 * on_cluster.sds[1]
    assert on_cluster.column_moments is None
    # Standardized: x's mean and sd over all partitions (not the exposure's), then the same
    # set-up; the slope is 0.5 · sd(x) on the standardized scale.
    model = tallmc.PoissonRegression(ddf, y="y", exposure="t", standardize=True)
    on_cluster = tallmc.setup(model, engine=engine)
    here = tallmc.setup(tallmc.PoissonRegression(tallmc.read_parquet(tmp_path / "counts"),
                                                 exposure="t", standardize=True), by_shard=True)
    same_bits(on_cluster, here)
    moments = on_cluster.column_moments
    assert abs(moments["mean"][0] - x.mean()) < 1e-12 and abs(moments["sd"][0] - x.std()) < 1e-12
    slope = on_cluster.mode[1] / x.std()
    assert abs(slope - 0.5) < 5 * on_cluster.sds[1] / x.std()


def test_a_bad_shard_is_named(engine, tmp_path):
    columns = logistic_columns(2_000, seed=3)
    columns["b"] = columns["b"].copy()
    columns["b"][1_234] = np.nan
    files = write_shards(tmp_path / "bad", columns, [0, 1_000, 2_000])
    with pytest.raises(Exception, match=r"part\.1\.parquet.*b.*row 234"):
        tallmc.setup(tallmc.LogisticRegression(files, y="y"), engine=engine)


def test_misuse_is_a_clear_error(engine, tmp_path):
    files = write_shards(tmp_path / "ok", logistic_columns(500), [0, 250, 500])
    model = tallmc.LogisticRegression(files, y="y")
    with pytest.raises(ValueError, match="engine=tallmc.dask.Engine"):
        tallmc.setup(model)
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        tallmc.dask.Engine("scheduler:8786")
    with pytest.raises(ValueError, match="no such column"):
        tallmc.LogisticRegression(files, y="outcome")
    with pytest.raises(TypeError, match=r"X is a path.*parquet_files\(path\)"):
        tallmc.LogisticRegression(str(tmp_path / "ok"), y="y")
    with pytest.raises(TypeError, match="counted by the workers"):
        model.num_rows
    here = tallmc.LogisticRegression(tallmc.read_parquet(tmp_path / "ok"))
    with pytest.raises(ValueError, match="in memory here"):
        tallmc.setup(here, engine=engine)


def same_draws(on_cluster, here, label):
    """The posterior and sample_stats of two runs are equal bit for bit, variable by variable."""
    for group in ("posterior", "sample_stats"):
        a, b = on_cluster[group], here[group]
        assert sorted(a.data_vars) == sorted(b.data_vars)
        for name in a.data_vars:
            same = a[name].values.tobytes() == b[name].values.tobytes()
            assert same, f"{label}: {group}.{name}"


def test_hmc_ecs_with_rows_from_the_workers_gives_the_local_draws_bit_for_bit(engine, tmp_path):
    n = 20_000
    files = write_shards(tmp_path / "draws", logistic_columns(n, seed=5),
                         [0, 5_000, 5_500, 12_000, n])
    sampler = tallmc.HmcEcs(subsample=300)
    settings = dict(chains=2, warmup=150, draws=150, seed=7, progress=False)
    for standardize in (False, True):
        on_cluster = tallmc.sample(tallmc.LogisticRegression(files, y="y", standardize=standardize),
                                   sampler, engine=engine, **settings)
        local = tallmc.read_parquet(tmp_path / "draws")
        here = tallmc.sample(tallmc.LogisticRegression(local, standardize=standardize),
                             sampler, by_shard=True, **settings)
        same_draws(on_cluster, here, f"standardize={standardize}")
        # The design checks ran over the shards too, with the same findings.
        warned = [json.loads(r.attrs["tallmc_summary"])["warnings"] for r in (on_cluster, here)]
        assert warned[0] == warned[1]
        assert not any("not checked" in w for w in warned[0])
        ran = json.loads(on_cluster.attrs["tallmc_run"])["model"]
        assert ("column_moments" in ran) == standardize
    # One block instead of the files' shards: the same posterior, other bits.
    one_block = tallmc.sample(tallmc.LogisticRegression(tallmc.read_parquet(tmp_path / "draws")),
                              sampler, **settings)
    assert one_block.posterior["beta"].values.tobytes() != here.posterior["beta"].values.tobytes()


def test_exact_minibatch_mh_with_rows_from_the_workers_gives_the_local_draws_bit_for_bit(
        engine, tmp_path):
    n = 20_000
    files = write_shards(tmp_path / "exact", logistic_columns(n, seed=8),
                         [0, 6_000, 6_400, 13_000, n])
    settings = dict(chains=2, warmup=200, draws=200, seed=3, progress=False)
    local = tallmc.read_parquet(tmp_path / "exact")
    for sampler in (tallmc.Smh(order=2), tallmc.MhSs(), tallmc.Smh(order=2, pcn=0.5)):
        on_cluster = tallmc.sample(tallmc.LogisticRegression(files, y="y"), sampler,
                                   engine=engine, **settings)
        here = tallmc.sample(tallmc.LogisticRegression(local), sampler, by_shard=True,
                             **settings)
        same_draws(on_cluster, here, sampler)
        # The minibatches were small: a few percent of the rows per iteration.
        assert on_cluster.attrs["data_fraction_per_iteration"] < 0.1, sampler


def test_samplers_that_read_every_row_are_refused_on_the_cluster(engine, tmp_path):
    files = write_shards(tmp_path / "refused", logistic_columns(600), [0, 300, 600])
    model = tallmc.LogisticRegression(files, y="y")
    with pytest.raises(ValueError, match="nuts over shards"):
        tallmc.sample(model, tallmc.Nuts(), engine=engine, progress=False)
    with pytest.raises(ValueError, match="subsample"):
        tallmc.sample(model, tallmc.HmcEcs(), engine=engine, progress=False)
    with pytest.raises(ValueError, match="engine=tallmc.dask.Engine"):
        tallmc.sample(model, tallmc.HmcEcs(subsample=100), progress=False)
