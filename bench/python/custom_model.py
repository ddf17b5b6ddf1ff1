"""A model written in Python against NumPyro's HMCECS: HMC-ECS on a NumPy `tallmc.CustomModel`
logistic regression, the same sampler on the built-in `tallmc.LogisticRegression`, and NumPyro
HMCECS, on the same higgs-like file (n = 10⁶, d = 29) in one session.

    python bench/python/custom_model.py [--venv DIR] [--work DIR] [--n 1000000] [--seed 1]
        [--warmup 500] [--draws 1000] [--peer-m 100,300,1300] [--repeat 1] [--cpu 0]
        [--skip-build] [--skip-peer] [--peer-scripts DIR] [--target-dir DIR]

What it does:

1. **Environment.** With ``--venv DIR`` an existing virtual environment is used (it needs
   numpy, arviz, maturin, and numpyro/jax/blackjax for the peer); otherwise ``WORK/venv`` is
   made and the pins of ``bench/peers/requirements.txt`` plus maturin are installed. The
   extension is built from this checkout with ``maturin build --release`` (several minutes;
   ``--target-dir`` to keep its cargo target away from other builds) and installed into the
   environment; ``--skip-build`` uses the tallmc already installed there.
2. **Data.** The peer scripts (``/work/shared/bench`` when present, else the vendored
   ``bench/peers``; ``--peer-scripts``) are copied to ``WORK/peer``; ``gen_data.py --n N
   --seed S`` writes the higgs-like ``.bin`` (reused if present; its sha256 is checked against
   the sidecar). Both sides read that file: tallmc through ``numpy.memmap``.
3. **Peer.** ``run_numpyro.py --method hmcecs --m M --blocks 100`` for each M of
   ``--peer-m`` (its defaults: 1 chain, 500 warmup, 1000 draws, εL = 1.2, Taylor proxy of
   degree 2 at the MAP, Laplace mass matrix); results in ``WORK/runs``.
4. **tallmc**, in one Python process: ``tallmc.HmcEcs`` (1 chain, ``threads=1``, ``init="mode"``,
   the peer's warmup and draws) on (a) the built-in ``LogisticRegression`` (X without the
   intercept column, ``intercept=True``), (b) a NumPy ``CustomModel`` with ``grad_terms`` and
   ``hess_terms`` (second-order control variates), (c) a ``CustomModel`` with ``grad_terms``
   only (first-order control variates), each at the paper's settings (m = 1300, G = 100,
   εL = 1.2) and at tallmc's defaults (m tuned for V[ℓ̂] ≤ 1 at the mode).
5. **Report** (stdout, ``WORK/report.md``, ``WORK/report.json``).

Every timed process is pinned to one CPU (``--cpu``; ``taskset``) with one thread
(``XLA_FLAGS`` one device and single-threaded Eigen, ``OMP/OPENBLAS/MKL_NUM_THREADS=1``,
``RAYON_NUM_THREADS=1``): the peer runs on one core, so tallmc does too.

Measures, alike on both sides: ESS = min over the 29 coefficients of arviz's bulk ESS (the
peer script's estimator); seconds = the **sampling phase only** (the peer's minus JAX
compilation; tallmc's from its summary, ``wall_seconds.sampling_max_over_chains``): no data
loading, mode finding, set-up or warmup on either side (those are reported beside);
∇ℓ_i per draw = per-datum gradient evaluations in the sampling phase per draw. With
``--repeat K`` every run is made K times and the fastest sampling phase kept (all listed).
For the CustomModels the time spent in Python in the sampling phase is measured too (the
bridge ``CustomModel._evaluate`` and the user's functions, timed by wrappers: a few µs per
call), so that Rust time = sampling − bridge. Correctness: each CustomModel run's posterior
means against the built-in run at the same settings, |Δmean| / (combined MCSE) per
coefficient, which should stay below 4.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
D = 29
ONE_THREAD = {
    "XLA_FLAGS": "--xla_force_host_platform_device_count=1 --xla_cpu_multi_thread_eigen=false",
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "JAX_PLATFORMS": "cpu", "RAYON_NUM_THREADS": "1",
}
# (key, label, model kind, sampler settings)
CONFIGS = [
    ("builtin-paper", "built-in LogisticRegression, m = 1300, G = 100", "builtin",
     dict(subsample=1300, blocks=100, trajectory_length=1.2)),
    ("custom2-paper", "CustomModel, grad + hess (cv order 2), m = 1300, G = 100", "custom2",
     dict(subsample=1300, blocks=100, trajectory_length=1.2)),
    ("custom1-paper", "CustomModel, grad only (cv order 1), m = 1300, G = 100", "custom1",
     dict(subsample=1300, blocks=100, trajectory_length=1.2)),
    ("builtin-tuned", "built-in LogisticRegression, m tuned", "builtin", {}),
    ("custom2-tuned", "CustomModel, grad + hess (cv order 2), m tuned", "custom2", {}),
    ("custom1-tuned", "CustomModel, grad only (cv order 1), m tuned", "custom1", {}),
]


def load_avg() -> float:
    return os.getloadavg()[0]


def run(cmd, env=None, cwd=None, log=None):
    """Runs ``cmd``; returns (stdout, seconds, child CPU seconds); stops with its stderr tail."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                           - before.children_system)
    if log:
        with open(log, "w") as f:
            f.write(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-30:])
        sys.exit(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{tail}")
    return proc.stdout, wall, cpu


def pinned(args, cmd):
    if args.cpu is None:
        return cmd
    if shutil.which("taskset") is None:
        sys.exit("taskset not found: install util-linux or pass --cpu none")
    return ["taskset", "-c", str(args.cpu)] + cmd


# ----------------------------------------------------------------------------- set-up
def environment(args) -> str:
    """The venv's python, made and filled if needed, with tallmc built from this checkout."""
    venv = args.venv or os.path.join(args.work, "venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        if args.venv:
            sys.exit(f"--venv {args.venv}: no bin/python there")
        print(f"making {venv}", flush=True)
        run([sys.executable, "-m", "venv", venv])
        req = os.path.join(REPO, "bench", "peers", "requirements.txt")
        run([py, "-m", "pip", "install", "-q", "-r", req, "maturin>=1.5,<2"])
    if not args.skip_build:
        wheels = os.path.join(args.work, "wheels")
        shutil.rmtree(wheels, ignore_errors=True)
        env = dict(os.environ)
        if args.target_dir:
            env["CARGO_TARGET_DIR"] = args.target_dir
        print("building tallmc (maturin build --release) …", flush=True)
        _, secs, _ = run([py, "-m", "maturin", "build", "--release", "-i", py, "-o", wheels],
                         env=env, cwd=os.path.join(REPO, "crates", "tallmc-py"),
                         log=os.path.join(args.work, "build.log"))
        wheel = [w for w in os.listdir(wheels) if w.endswith(".whl")][0]
        run([py, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps",
             os.path.join(wheels, wheel)])
        print(f"built and installed {wheel} in {secs:.0f} s", flush=True)
    return py


def data(args, py) -> tuple[str, str]:
    """(peer work dir, .bin path): the peer scripts copied, the data made and checked."""
    src = args.peer_scripts
    if src is None:
        src = "/work/shared/bench" if os.path.isdir("/work/shared/bench") else \
            os.path.join(REPO, "bench", "peers")
    peer = os.path.join(args.work, "peer")
    os.makedirs(peer, exist_ok=True)
    for f in os.listdir(src):
        if f.endswith(".py"):
            shutil.copy(os.path.join(src, f), peer)
    stem = os.path.join(peer, "data", f"higgs_like_n{args.n}_seed{args.seed}")
    if not os.path.exists(stem + ".bin"):
        print(f"gen_data.py --n {args.n} --seed {args.seed}", flush=True)
        run([py, "gen_data.py", "--n", str(args.n), "--seed", str(args.seed)], cwd=peer)
    with open(stem + ".json") as f:
        side = json.load(f)
    h = hashlib.sha256()
    with open(stem + ".bin", "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    if h.hexdigest() != side["sha256"]:
        sys.exit(f"{stem}.bin: sha256 {h.hexdigest()} is not the sidecar's {side['sha256']}")
    return peer, stem + ".bin"


def peer_runs(args, py, peer) -> list[dict]:
    env = dict(os.environ, **ONE_THREAD)
    outdir = os.path.join(args.work, "runs")
    os.makedirs(outdir, exist_ok=True)
    out = []
    for m in args.peer_m:
        best = None
        for r in range(args.repeat):
            tag = f"hmcecs_m{m}_n{args.n}_r{r}"
            load0 = load_avg()
            _, wall, cpu = run(pinned(args, [
                py, "run_numpyro.py", "--n", str(args.n), "--seed", str(args.seed),
                "--rng", str(args.rng), "--method", "hmcecs", "--m", str(m), "--blocks",
                str(args.blocks), "--warmup", str(args.warmup), "--samples", str(args.draws),
                "--tag", tag, "--outdir", outdir]), env=env, cwd=peer,
                log=os.path.join(outdir, tag + ".log"))
            with open(os.path.join(outdir, tag + ".json")) as f:
                res = json.load(f)
            row = {
                "key": f"peer-m{m}", "side": "peer",
                "label": f"NumPyro HMCECS, m = {m}, G = {args.blocks}",
                "m": m, "draws": res["draws"], "ess_min": res["ess_min"],
                "sampling_s": res["sampling_s"], "warmup_s": res["warmup_s"],
                "setup_s": res["map_s"] + res["init_s"],
                "compile_s": res["warmup_compile_s"] + res["sampling_compile_s"]
                + res.get("init_compile_s", 0.0) + res.get("map_compile_s", 0.0),
                "grads_per_draw": res["datapoint_grads_per_draw"],
                "evals_per_draw": res["datapoint_grads_per_draw"],
                "load": (load0, load_avg()), "cpu_per_wall": cpu / wall,
                "mean": res["mean"], "step_size": res["step_size"],
                "versions": res["env"]["versions"],
            }
            row["ess_per_s"] = row["ess_min"] / row["sampling_s"]
            print(f"  peer m = {m}: ESS {row['ess_min']:.0f} in {row['sampling_s']:.2f} s "
                  f"(load {row['load'][0]:.1f}–{row['load'][1]:.1f})", flush=True)
            times = (best or {}).get("all_sampling_s", []) + [row["sampling_s"]]
            if best is None or row["sampling_s"] < best["sampling_s"]:
                best = row
            best["all_sampling_s"] = times
        out.append(best)
    return out


# ----------------------------------------------------------------------------- tallmc side
def inner(args) -> None:
    """The tallmc runs, in this process (started pinned, inside the venv)."""
    import numpy as np
    import arviz as az
    import tallmc
    import tallmc._sample as sample_module

    n, d = args.n, D
    raw = np.memmap(args.bin, dtype="<f8", mode="r", shape=(n * (d + 1),))
    X = np.asarray(raw[: n * d]).reshape(n, d)   # row-major, column 0 the intercept
    y = np.asarray(raw[n * d:])

    # The NumPy logistic regression of crates/tallmc-py/tests/test_custom_models.py.
    def log_terms(theta, batch):
        X, y = batch
        eta = X @ theta
        return y * eta - np.logaddexp(0.0, eta)

    def grad_terms(theta, batch):
        X, y = batch
        return (y - 1.0 / (1.0 + np.exp(-(X @ theta))))[:, None] * X

    def hess_terms(theta, batch):
        X, _ = batch
        s = 1.0 / (1.0 + np.exp(-(X @ theta)))
        return (-s * (1.0 - s))[:, None, None] * X[:, :, None] * X[:, None, :]

    # Timers: every bridge call and user call as (start, seconds, kind, rows); the run's end
    # is when tallmc.sample starts building InferenceData.
    calls, user, ends = [], [], []

    def timed_user(kind, f):
        def g(theta, batch):
            t = time.perf_counter()
            r = f(theta, batch)
            user.append((t, time.perf_counter() - t, kind, len(batch[1])))
            return r
        g.__name__ = f.__name__
        return g

    def custom(order):
        model = tallmc.CustomModel(
            timed_user("log_terms", log_terms), (X, y), dim=d,
            names=["intercept"] + [f"x{j}" for j in range(d - 1)],
            grad_terms=timed_user("grad_terms", grad_terms),
            hess_terms=timed_user("hess_terms", hess_terms) if order == 2 else None)
        bridge = model._evaluate

        def timed_bridge(kind, theta, rows):
            t = time.perf_counter()
            r = bridge(kind, theta, rows)
            m = rows.stop - rows.start if isinstance(rows, slice) else len(rows)
            calls.append((t, time.perf_counter() - t, kind, m))
            return r
        model._evaluate = timed_bridge
        return model

    real_inference_data = sample_module.inference_data

    def marked(*a, **k):
        ends.append(time.perf_counter())
        return real_inference_data(*a, **k)
    sample_module.inference_data = marked

    builtin = tallmc.LogisticRegression(np.ascontiguousarray(X[:, 1:]), np.ascontiguousarray(y),
                                        intercept=True)
    models = {"builtin": builtin, "custom2": custom(2), "custom1": custom(1)}
    results = {}
    for rep in range(args.repeat):
        for key, label, kind, settings in CONFIGS:
            del calls[:], user[:], ends[:]
            load0 = load_avg()
            cpu0, t0 = time.process_time(), time.perf_counter()
            idata = tallmc.sample(models[kind], tallmc.HmcEcs(**settings), chains=1,
                                  warmup=args.warmup, draws=args.draws, seed=args.rng,
                                  init="mode", threads=1, progress=False)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            s = json.loads(idata.attrs["tallmc_summary"])
            tot = s["totals"]
            if kind == "builtin":
                draws = idata.posterior["beta"].values
            else:
                draws = np.stack([idata.posterior[v].values for v in models[kind].names], -1)
            # The peer script's estimator (run_numpyro.py's ess_bulk), and MCSE of the mean.
            ds = az.convert_to_dataset({"theta": draws})
            ess = np.asarray(az.ess(ds, method="bulk")["theta"].values)
            mcse = np.asarray(az.mcse(ds, method="mean")["theta"].values)
            secs = tot["wall_seconds"]
            samp = secs["sampling_max_over_chains"]
            ev = tot["evals_sampling"]
            adapt = s["adaptation"][0]
            m_used = next(int(a.split("=")[1]) for a in adapt if a.startswith("Subsample size"))
            step = next(float(a.split("=")[1]) for a in adapt if a.startswith("Step size"))
            row = {
                "key": key, "side": "tallmc", "label": f"tallmc HMC-ECS, {label}", "m": m_used,
                "draws": int(draws.shape[1]), "ess_min": float(ess.min()),
                "sampling_s": samp, "warmup_s": secs["warmup_max_over_chains"],
                "setup_s": secs["setup"], "call_s": wall,
                "grads_per_draw": ev["gradients"] / args.draws,
                "evals_per_draw": ev["total"] / args.draws,
                "terms_per_draw": ev["terms"] / args.draws,
                "hessians_per_draw": ev["hessians"] / args.draws,
                "load": (load0, load_avg()), "cpu_per_wall": cpu / wall,
                "mean": draws.reshape(-1, d).mean(0).tolist(), "mcse": mcse.tolist(),
                "step_size": step, "cv_order": s["spec"]["sampler"].get("cv_order"),
            }
            row["ess_per_s"] = row["ess_min"] / samp
            if kind != "builtin" and ends:
                end = ends[0]
                phases = {"sampling": (end - samp, end),
                          "warmup": (end - samp - secs["warmup_max_over_chains"], end - samp),
                          "setup": (t0, end - samp - secs["warmup_max_over_chains"])}
                prof = {}
                for phase, (lo, hi) in phases.items():
                    for what, log in (("bridge", calls), ("user", user)):
                        for t, dt, k, rows in log:
                            if lo <= t < hi:
                                p = prof.setdefault(phase, {}).setdefault(
                                    f"{what}:{k}", [0, 0.0, 0])
                                p[0] += 1
                                p[1] += dt
                                p[2] += rows
                row["python"] = prof
            print(f"  {key}: m = {m_used}, ESS {row['ess_min']:.0f} in {samp:.3f} s "
                  f"(setup {secs['setup']:.1f} s, warmup {secs['warmup_max_over_chains']:.2f} s, "
                  f"load {row['load'][0]:.1f}–{row['load'][1]:.1f})", flush=True)
            prev = results.get(key)
            times = (prev or {}).get("all_sampling_s", []) + [samp]
            if prev is None or samp < prev["sampling_s"]:
                results[key] = row
            results[key]["all_sampling_s"] = times
            del idata
    sample_module.inference_data = real_inference_data
    with open(args.out, "w") as f:
        json.dump({"rows": [results[k] for k, *_ in CONFIGS],
                   "numpy": np.__version__, "tallmc": getattr(tallmc, "__version__", None)},
                  f, indent=1)


# ----------------------------------------------------------------------------- report
def report(args, rows, peers, extra) -> str:
    by = {r["key"]: r for r in rows}
    best_peer = max(peers, key=lambda r: r["ess_per_s"]) if peers else None
    peer1300 = next((p for p in peers if p["m"] == 1300), None)
    lines = [
        f"n = {args.n:,}, d = {D}, seed {args.seed}; 1 chain, {args.warmup} warmup + "
        f"{args.draws} draws; every process pinned to CPU {args.cpu}, one thread; "
        f"fastest of {args.repeat} per row.",
        "",
        "| side | run | m | draws | min bulk ESS | sampling s | ESS/s | ∇ℓ_i per draw | all "
        "per-datum evals per draw | set-up s | warmup s | load | CPU/wall |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows + peers:
        lines.append(
            f"| {r['side']} | {r['label']} | {r['m']} | {r['draws']} | {r['ess_min']:.0f} | "
            f"{r['sampling_s']:.3f} | {r['ess_per_s']:.1f} | {r['grads_per_draw']:.0f} | "
            f"{r['evals_per_draw']:.0f} | {r['setup_s']:.1f} | {r['warmup_s']:.2f} | "
            f"{r['load'][0]:.1f}–{r['load'][1]:.1f} | {r['cpu_per_wall']:.2f} |")
    lines += ["", "Ratios of ESS/s (sampling phase):", ""]
    for key in ("custom2-paper", "custom1-paper", "custom2-tuned", "custom1-tuned"):
        r = by.get(key)
        if r is None:
            continue
        base = by["builtin-" + key.split("-")[1]]
        parts = [f"/ built-in (same settings) **{r['ess_per_s'] / base['ess_per_s']:.3f}×** "
                 f"(time per draw {r['sampling_s'] / base['sampling_s']:.1f}×)"]
        if peer1300:
            parts.append(f"/ peer m = 1300 **{r['ess_per_s'] / peer1300['ess_per_s']:.2f}×**")
        if best_peer:
            parts.append(f"/ peer at its best m ({best_peer['m']}) "
                         f"**{r['ess_per_s'] / best_peer['ess_per_s']:.2f}×**")
        lines.append(f"* {key}: " + ", ".join(parts))
    lines += ["", "Posterior means, CustomModel against the built-in run at the same settings "
              "(max over the 29 of |Δmean| / combined MCSE; below 4 agrees):", ""]
    for key in ("custom2-paper", "custom1-paper", "custom2-tuned", "custom1-tuned"):
        r = by[key]
        base = by["builtin-" + key.split("-")[1]]
        z = [abs(a - b) / (sa * sa + sb * sb) ** 0.5
             for a, b, sa, sb in zip(r["mean"], base["mean"], r["mcse"], base["mcse"])]
        r["max_z"] = max(z)
        dmax = max(abs(a - b) for a, b in zip(r["mean"], base["mean"]))
        lines.append(f"* {key}: {max(z):.2f} ({'agrees' if max(z) < 4 else 'DISAGREES'}; "
                     f"max |Δmean| {dmax:.1e}, ESS {r['ess_min']:.1f} vs {base['ess_min']:.1f})")
    lines += ["", "Python in the CustomModels' runs (calls, seconds, rows per call; bridge = "
              "`CustomModel._evaluate` incl. the user's function):", ""]
    for key in ("custom2-paper", "custom1-paper", "custom2-tuned", "custom1-tuned"):
        r = by[key]
        for phase in ("setup", "warmup", "sampling"):
            p = r.get("python", {}).get(phase, {})
            if not p:
                continue
            txt = ", ".join(f"{k} {v[0]}× {v[1]:.3f} s {v[2] / max(v[0], 1):.0f} rows"
                            for k, v in sorted(p.items()))
            bridge = sum(v[1] for k, v in p.items() if k.startswith("bridge"))
            whole = {"setup": r["setup_s"], "warmup": r["warmup_s"],
                     "sampling": r["sampling_s"]}[phase]
            lines.append(f"* {key} {phase} ({whole:.3f} s; Python {bridge:.3f} s, the rest "
                         f"{whole - bridge:.3f} s): {txt}")
    if peers:
        lines += ["", "Peer runs: " + ", ".join(
            f"m = {p['m']}: {p['ess_per_s']:.1f} ESS/s (sampling s {p['all_sampling_s']})"
            for p in peers)]
    lines += ["", "tallmc sampling seconds of every repeat: " + ", ".join(
        f"{r['key']} {[round(x, 3) for x in r['all_sampling_s']]}" for r in rows)]
    lines += ["", "Environment: " + json.dumps(extra)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default=None, help="an existing virtual environment to use")
    ap.add_argument("--work", default=os.path.join(REPO, "target", "custom_model_bench"))
    ap.add_argument("--target-dir", default=None, help="CARGO_TARGET_DIR of the wheel's build")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rng", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--blocks", type=int, default=100)
    ap.add_argument("--peer-m", default="100,300,1300")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cpu", default="0", help="CPU to pin to ('none': no pinning)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--peer-scripts", default=None)
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--bin", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.cpu = None if args.cpu == "none" else args.cpu
    args.peer_m = [int(m) for m in args.peer_m.split(",") if m]
    if args.inner:
        inner(args)
        return
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    start = time.perf_counter()
    py = environment(args)
    peer, binfile = data(args, py)
    peers = []
    if not args.skip_peer:
        print("peer: NumPyro HMCECS", flush=True)
        peers = peer_runs(args, py, peer)
    print("tallmc: built-in and CustomModel HMC-ECS", flush=True)
    out = os.path.join(args.work, "tallmc.json")
    env = dict(os.environ, **ONE_THREAD)
    cmd = [py, os.path.abspath(__file__), "--inner", "--bin", binfile, "--out", out,
           "--n", str(args.n), "--rng", str(args.rng), "--warmup", str(args.warmup),
           "--draws", str(args.draws), "--repeat", str(args.repeat)]
    stdout, _, _ = run(pinned(args, cmd), env=env, log=os.path.join(args.work, "tallmc.log"))
    print(stdout, end="", flush=True)
    with open(out) as f:
        ours = json.load(f)
    uname = os.uname()
    cpu_model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                      if line.startswith("model name")), "?")
    extra = {"cpu": cpu_model, "cpus": os.cpu_count(), "kernel": uname.release,
             "numpy": ours["numpy"], "peer_versions": peers[0]["versions"] if peers else None,
             "checkout_head": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                             capture_output=True, text=True).stdout.strip(),
             "tallmc_wheel": "the one already in the venv (--skip-build)" if args.skip_build
             else "built from this checkout",
             "whole_run_s": round(time.perf_counter() - start, 1)}
    text = report(args, ours["rows"], peers, extra)
    print("\n" + text)
    with open(os.path.join(args.work, "report.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.work, "report.json"), "w") as f:
        json.dump({"tallmc": ours["rows"], "peer": peers, "env": extra,
                   "args": vars(args)}, f, indent=1)


if __name__ == "__main__":
    main()
