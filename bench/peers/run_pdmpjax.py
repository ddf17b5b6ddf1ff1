#!/usr/bin/env python3
"""One pdmp-jax peer run (full-data Zig-Zag or BPS) on the higgs-like binary data set.

pdmp-jax (Andral, PyPI `pdmp-jax`, JAX on CPU) simulates PDMPs on any differentiable potential
with an automatic piecewise-constant bound: the rate and its time derivative on a grid over an
adaptive horizon. It has no subsampling, so this compares the full-data samplers.

Written by the tallmc team (not vendored). It needs its own virtual environment because
pdmp-jax pins jax < 0.5 (see `requirements-pdmp.txt`); `cargo xtask bench --peers` makes it.

    python run_pdmpjax.py --n 100000 --method zigzag --events 20000

reads `data/higgs_like_n{n}_seed{seed}.bin` (written by gen_data.py) and writes
`runs/<tag>.json` with: events per second, full-data gradient and Hessian-vector evaluations per
event (counted from pdmp-jax's per-event counters of rejections, horizon hits and bound errors,
see `count_evaluations`), the discretized draws' bulk ESS (arviz) and ESS per second, and the
timings. Timing follows run_numpyro.py: wall-clock of the sampling scan minus the time JAX spent
tracing and compiling inside it (union of /jax/core/compile/* spans). The model and prior are
those of UPSTREAM_README.md: logistic regression, theta ~ N(0, 10^2 I).
"""

import argparse
import json
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")

import numpy as np  # noqa: E402
from peer_common import load_higgs_like, union_length  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import pdmp_jax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PRIOR_SD = 10.0

# ----------------------------------------------------------------------------- compile timer
_SPANS = []
_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


def _duration_listener(event, duration_secs, **kw):
    # jax 0.4 reports a duration when the event ends; the span is [now - duration, now].
    if event in _COMPILE_EVENTS:
        end = time.perf_counter()
        _SPANS.append((end - duration_secs, end))


jax.monitoring.register_event_duration_secs_listener(_duration_listener)


def compile_time(t0, t1):
    """Length of the union of compile spans clipped to [t0, t1]."""
    return union_length(_SPANS, t0, t1)


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.t1 = time.perf_counter()
        self.wall = self.t1 - self.t0
        self.compile = compile_time(self.t0, self.t1)
        self.exec = self.wall - self.compile


# ----------------------------------------------------------------------------- data and mode
def load(n, seed):
    return load_higgs_like(os.path.join(HERE, "data"), n, seed)


def map_fit(X, y, iters=50, tol=1e-10):
    """Newton's method on the log posterior (numpy, float64)."""
    theta = np.zeros(X.shape[1])
    for _ in range(iters):
        eta = X @ theta
        p = 1.0 / (1.0 + np.exp(-eta))
        g = X.T @ (y - p) - theta / PRIOR_SD**2
        H = -(X.T * (p * (1 - p))) @ X - np.eye(X.shape[1]) / PRIOR_SD**2
        step = np.linalg.solve(H, g)
        theta = theta - step
        if np.max(np.abs(step)) < tol:
            break
    cov = np.linalg.inv(-H)
    return theta, cov


# ----------------------------------------------------------------------------- counting
def count_evaluations(out, events, grid_size):
    """Full-data gradient and Hessian-vector evaluations of `events` skeleton steps.

    pdmp-jax, per event (sampling_loop.one_step): it builds a bound 1 + hitting_horizon +
    error_bound times; each build evaluates the rate and its time derivative at grid_size grid
    points (one gradient and one forward-mode product, i.e. a Hessian-vector product, each);
    each proposal examined evaluates the rate once (one gradient): the accepted one, the
    rejected ones and those that exceeded the bound (error_bound); the velocity jump evaluates
    the gradient once more at the event.
    """
    rejected = int(np.sum(np.asarray(out.rejected)[1:]))
    horizon = int(np.sum(np.asarray(out.hitting_horizon)[1:]))
    errors = int(np.sum(np.asarray(out.error_bound)[1:]))
    builds = events + horizon + errors
    gradients = builds * grid_size + (events + rejected + errors) + events
    hvps = builds * grid_size
    return {
        "bound_builds": builds,
        "rejected": rejected,
        "horizon_hits": horizon,
        "bound_errors": errors,
        "full_gradients": gradients,
        "hessian_vector_products": hvps,
        "gradients_per_event": gradients / events,
        "hvps_per_event": hvps / events,
    }


def ess_bulk(draws):
    """Bulk ESS (arviz) of every column of a one-chain draws array."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az

    return np.array([float(az.ess(draws[None, :, j], method="bulk")) for j in range(draws.shape[1])])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--method", required=True, choices=["zigzag", "bps"])
    ap.add_argument("--rng", type=int, default=1)
    ap.add_argument("--warmup-events", type=int, default=2000)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--samples", type=int, default=5000, help="grid draws from the skeleton")
    ap.add_argument("--grid-size", type=int, default=10)
    ap.add_argument("--refresh", type=float, default=0.1, help="BPS refresh rate")
    ap.add_argument("--tag", default=None)
    ap.add_argument("--outdir", default=os.path.join(HERE, "runs"))
    args = ap.parse_args()

    X, y, meta = load(args.n, args.seed)
    t0 = time.perf_counter()
    theta_star, cov = map_fit(X, y)
    map_s = time.perf_counter() - t0
    d = X.shape[1]
    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def grad_U(theta):
        return -(Xj.T @ (yj - jax.nn.sigmoid(Xj @ theta)) - theta / PRIOR_SD**2)

    common = dict(grid_size=args.grid_size, tmax=0.0)
    if args.method == "zigzag":
        sampler = pdmp_jax.ZigZag(d, grad_U, **common)
        v0 = np.where(np.random.default_rng(args.rng).random(d) < 0.5, -1.0, 1.0)
    else:
        sampler = pdmp_jax.BouncyParticle(d, grad_U, refresh_rate=args.refresh, **common)
        v0 = np.random.default_rng(args.rng).standard_normal(d)

    with Timer() as warm:
        w = sampler.sample_skeleton(args.warmup_events, jnp.asarray(theta_star), jnp.asarray(v0),
                                    args.rng, verbose=False)
        jax.block_until_ready(w.x)
    x1, v1 = sampler.state.x, sampler.state.v
    with Timer() as run:
        out = sampler.sample_skeleton(args.events, x1, v1, args.rng + 1, verbose=False)
        jax.block_until_ready(out.x)
    draws = np.asarray(sampler.sample_from_skeleton(args.samples, out))
    ess = ess_bulk(draws)
    counts = count_evaluations(out, args.events, args.grid_size)
    traj_time = float(np.asarray(out.t)[-1] - np.asarray(out.t)[0])
    sd = np.sqrt(np.diag(cov))
    mean_err = np.abs(draws.mean(axis=0) - theta_star) / sd
    result = {
        "peer": "pdmp-jax",
        "peer_version": getattr(pdmp_jax, "__version__", "0.1.1"),
        "jax_version": jax.__version__,
        "method": args.method,
        "n": args.n,
        "d": d,
        "config": {
            "grid_size": args.grid_size,
            "tmax": "adaptive",
            "refresh_rate": args.refresh if args.method == "bps" else 0.0,
            "warmup_events": args.warmup_events,
            "events": args.events,
            "samples": args.samples,
            "start": "MAP (Newton)",
            "rng": args.rng,
        },
        "map_s": map_s,
        "warmup_wall_s": warm.wall,
        "warmup_compile_s": warm.compile,
        "sampling_wall_s": run.wall,
        "sampling_compile_s": run.compile,
        "sampling_s": run.exec,
        "trajectory_time": traj_time,
        "events_per_s": args.events / run.exec,
        "ess_bulk": ess.tolist(),
        "ess_bulk_min": float(ess.min()),
        "ess_bulk_median": float(np.median(ess)),
        "ess_per_s_median": float(np.median(ess) / run.exec),
        "ess_per_s_min": float(ess.min() / run.exec),
        "max_abs_mean_error_laplace_sd": float(mean_err.max()),
        **counts,
        "per_datum_gradients_per_event": counts["gradients_per_event"] * args.n,
    }
    os.makedirs(args.outdir, exist_ok=True)
    tag = args.tag or f"pdmpjax_{args.method}_n{args.n}"
    path = os.path.join(args.outdir, tag + ".json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "ess_bulk"}, indent=1))


if __name__ == "__main__":
    main()
