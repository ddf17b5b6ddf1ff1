#!/usr/bin/env python3
"""The scaling numbers of docs/scaling.md for the Dask engine, on a tall Parquet directory
(bench/scale/gen_parquet.py): logistic regression, every numeric column but y a covariate.

    python bench/scale/dask_scale.py setup-local  DIR            # 2 threads, data in memory
    python bench/scale/dask_scale.py setup-dask   DIR            # LocalCluster, 2 processes
    python bench/scale/dask_scale.py sample-dask  DIR --m 2000   # HMC-ECS, rows from workers
    python bench/scale/dask_scale.py sample-local BIN --m 2000   # HMC-ECS on a memory map
    python bench/scale/dask_scale.py compare DIR --binary BIN    # both, and their ratio

Each prints one JSON line: wall times, the setup's passes, per-iteration sampling time, and the
driver's anonymous resident memory (RssAnon of /proc/self/status, sampled every 50 ms: its peak
before the run, during the set-up and during sampling). The workers run one thread each
(RAYON_NUM_THREADS=1), as the local set-up runs on 2: the same 2 cores either way.

Needs tallmc (with the dask extra), numpy and pyarrow."""
import argparse
import json
import os
import threading
import time


def rss_anon_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Peak:
    """RssAnon over a phase, sampled every 20 ms in a thread: its peak, and its peak after a
    given time (the sampling, once the set-up is over)."""

    def __init__(self):
        self.start = time.time()
        self.series = [(0.0, rss_anon_mb())]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self):
        while not self._stop.wait(0.02):
            self.series.append((time.time() - self.start, rss_anon_mb()))

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        self.series.append((time.time() - self.start, rss_anon_mb()))
        return max(v for _, v in self.series)

    def peak_between(self, start: float, end: float) -> float:
        return max((v for t, v in self.series if start <= t <= end), default=float("nan"))


def cluster():
    os.environ["RAYON_NUM_THREADS"] = "1"  # inherited by the worker processes
    from dask.distributed import Client, LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    return c, Client(c)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["setup-local", "setup-dask", "sample-dask", "sample-local",
                                     "compare"])
    ap.add_argument("data")
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--binary", help="compare: the same rows in the binary format")
    ap.add_argument("--rounds", type=int, default=3, help="compare: runs of each")
    a = ap.parse_args()
    if a.what == "compare":
        return compare(a)

    import numpy as np
    import tallmc

    out = {"what": a.what, "data": a.data, "rss_anon_mb_at_start": rss_anon_mb()}
    if a.what == "setup-local":
        t = time.time()
        data = tallmc.read_parquet(a.data, y="y")
        out["read_seconds"] = time.time() - t
        model = tallmc.LogisticRegression(data)
        s = tallmc.setup(model, by_shard=True)
        out.update(setup_seconds=s.seconds, newton_iterations=s.newton_iterations,
                   shards=s.shards, evaluations=s.evaluations, rows=data.num_rows,
                   mode_head=list(s.mode[:3]))
    elif a.what == "setup-dask":
        import tallmc.dask

        c, client = cluster()
        engine = tallmc.dask.Engine(client)
        model = tallmc.LogisticRegression(tallmc.parquet_files(a.data), y="y")
        t = time.time()
        shards = engine.persist(model.sharded)
        out["persist_seconds"] = time.time() - t
        peak = Peak()
        s = tallmc.setup(model, engine=engine)
        out["rss_anon_mb_peak_setup"] = peak.stop()
        out.update(setup_seconds=s.seconds, newton_iterations=s.newton_iterations,
                   shards=s.shards, evaluations=s.evaluations, rows=shards.num_rows,
                   rows_on_driver=s.rows_on_driver, mode_head=list(s.mode[:3]))
        # One pass of each kind, per shard, timed on the workers' side by the driver's wall clock.
        theta = list(s.mode)
        for kind in ["gradient", "hessian"]:
            t = time.time()
            shards.pass_sums(json.dumps(model.spec()), theta, json.dumps(kind))
            out[f"{kind}_pass_seconds"] = time.time() - t
        client.close()
        c.close()
    else:
        settings = dict(chains=a.chains, warmup=a.warmup, draws=a.draws, seed=1, progress=False)
        sampler = tallmc.HmcEcs(subsample=a.m)
        if a.what == "sample-dask":
            import tallmc.dask

            c, client = cluster()
            engine = tallmc.dask.Engine(client)
            model = tallmc.LogisticRegression(tallmc.parquet_files(a.data), y="y")
            t = time.time()
            engine.persist(model.sharded)
            out["persist_seconds"] = time.time() - t
            out["rss_anon_mb_after_persist"] = rss_anon_mb()
            peak = Peak()
            idata = tallmc.sample(model, sampler, engine=engine, **settings)
            out["rss_anon_mb_peak_run"] = peak.stop()
            client.close()
            c.close()
        else:
            X, y = tallmc_binary(a.data)
            peak = Peak()
            idata = tallmc.sample(tallmc.LogisticRegression(X, y), sampler, **settings)
            out["rss_anon_mb_peak_run"] = peak.stop()
        summary = json.loads(idata.attrs["tallmc_summary"])
        wall = summary["totals"]["wall_seconds"]
        # The chains run from the end of the set-up to the run's end (the summary's times, from
        # the run's start; 0.1 s inside, to leave the set-up's last frees and the building of
        # the InferenceData — arviz and xarray imported — outside).
        out["rss_anon_mb_peak_setup"] = peak.peak_between(0.0, wall["setup"])
        out["rss_anon_mb_peak_sampling"] = peak.peak_between(wall["setup"] + 0.1,
                                                             wall["total"] - 0.1)
        out.update(wall=wall, iterations=a.warmup + a.draws,
                   seconds_per_iteration=(wall["warmup_max_over_chains"]
                                          + wall["sampling_max_over_chains"])
                   / (a.warmup + a.draws),
                   beta_mean_head=[float(v) for v in
                                   idata.posterior["beta"].mean(("chain", "draw")).values[:3]])
    print(json.dumps(out), flush=True)


def compare(a):
    """HMC-ECS per iteration with rows from the workers against a memory map of the same rows,
    measured in one invocation (each run in a fresh process, alternating), and the ratio."""
    import subprocess
    import sys

    common = ["--m", str(a.m), "--warmup", str(a.warmup), "--draws", str(a.draws),
              "--chains", str(a.chains)]
    runs = {"sample-local": [], "sample-dask": []}
    for _ in range(a.rounds):
        for what, data in (("sample-local", a.binary), ("sample-dask", a.data)):
            line = subprocess.run([sys.executable, __file__, what, data, *common], check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1]
            runs[what].append(json.loads(line))
    per = {k: [r["seconds_per_iteration"] for r in v] for k, v in runs.items()}
    sampling = {k: [r["wall"]["sampling_max_over_chains"] / a.draws for r in v]
                for k, v in runs.items()}
    print(json.dumps({
        "seconds_per_iteration": per,
        "ratio_dask_to_memory_map": min(per["sample-dask"]) / min(per["sample-local"]),
        "sampling_seconds_per_iteration": sampling,
        "sampling_ratio": min(sampling["sample-dask"]) / min(sampling["sample-local"]),
        "rss_anon_mb_peak_sampling_dask": max(r["rss_anon_mb_peak_sampling"]
                                              for r in runs["sample-dask"]),
    }))


def tallmc_binary(path):
    """X and y of a tallmc binary file (``data.bin`` beside its ``data.json`` header),
    memory-mapped as docs/data-format.md lays them out."""
    import numpy as np

    stem = path[:-4] if path.endswith((".bin", ".json")) else path
    stem = stem[:-1] if stem.endswith(".") else stem
    with open(stem + ".json") as f:
        header = json.load(f)
    n, d = header["n"], header["d"]
    X = np.memmap(stem + ".bin", dtype="<f8", mode="r", offset=header["x_offset_bytes"],
                  shape=(n, d))
    y = np.memmap(stem + ".bin", dtype="<f8", mode="r", offset=header["y_offset_bytes"],
                  shape=(n,))
    return X, y


if __name__ == "__main__":
    main()
