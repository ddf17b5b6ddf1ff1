"""Ctrl-C stops a run and raises KeyboardInterrupt within a second, also while the sampling
thread is in a long pass that does not look at the stop flag; a memory-mapped array is read in
place (anonymous resident memory does not grow by the array's size while it is sampled)."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

# Imported before the measurement: tallmc.sample reads its result into ArviZ, whose first
# import (xarray, pandas, …) takes tens of MB of anonymous memory that is not the data's.
import arviz  # noqa: F401
import numpy as np

import tallmc

# Each child sets Python's Ctrl-C handler itself: a process started in the background by a
# non-interactive shell (as CI may start this suite) inherits SIGINT ignored, and Python then
# leaves it ignored.
CHILD = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np, tallmc
    rng = np.random.default_rng(1)
    # 200,000 rows: an iteration takes ~0.1 ms, so the draws made before Ctrl-C (whose summary
    # the run still writes) stay few; with 2,000 rows millions pile up in two seconds.
    y = rng.normal(size=200_000)
    model = tallmc.GaussianMean(y, sigma=1.0)
    print("sampling", flush=True)
    start = time.time()
    try:
        tallmc.sample(model, tallmc.Rwm(), chains=2, warmup=1000, draws=50_000_000, seed=1,
                      progress=False)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(0)
    print("finished", flush=True)
    sys.exit(1)
""")


# A job on the sampling thread that does not look at the stop flag for 30 s, as a pass of the
# setup (Newton's method) over 10⁸ rows does not.
BUSY_CHILD = textwrap.dedent("""
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from tallmc import _tallmc
    print("sampling", flush=True)
    try:
        _tallmc._test_job("busy", 30.0)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(0)
    print("finished", flush=True)
    sys.exit(1)
""")


def seconds_from_ctrl_c_to_exit(code: str) -> float:
    """Starts `code` in a child Python, sends SIGINT 2 s after it prints "sampling", checks that
    it caught KeyboardInterrupt, and returns the seconds from the signal to its exit."""
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "sampling"
    time.sleep(2.0)  # well into the job
    sent = time.time()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    elapsed = time.time() - sent
    print(f"{elapsed:.2f} s from SIGINT to the end of the process")
    assert child.returncode == 0, out
    assert out.strip() == "KeyboardInterrupt"
    return elapsed


def test_ctrl_c_stops_sampling_within_a_second_and_raises_keyboard_interrupt():
    elapsed = seconds_from_ctrl_c_to_exit(CHILD)
    assert elapsed < 1.0, f"{elapsed:.2f} s from SIGINT to exit"


def test_ctrl_c_during_a_long_setup_pass_still_returns_within_a_second():
    elapsed = seconds_from_ctrl_c_to_exit(BUSY_CHILD)
    assert elapsed < 1.0, f"{elapsed:.2f} s from SIGINT to exit"


def rss_anon_kb():
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise RuntimeError("no RssAnon in /proc/self/status")


def test_a_memory_mapped_array_is_not_copied(tmp_path):
    # 2,000,000 × 10 float64 = 160 MB (sized for CI; bench/python/memmap_rss.py runs 10⁷ rows).
    n, p = 2_000_000, 10
    X = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float64, shape=(n, p))
    rng = np.random.default_rng(2)
    for start in range(0, n, 250_000):
        block = rng.normal(size=(250_000, p))
        X[start:start + 250_000] = block
    X.flush()
    theta = np.linspace(-0.5, 0.5, p)
    y = (rng.random(n) < 1 / (1 + np.exp(-(np.asarray(X) @ theta)))).astype(np.float64)
    np.save(tmp_path / "y.npy", y)
    del X, y
    X = np.load(tmp_path / "X.npy", mmap_mode="r")
    y = np.load(tmp_path / "y.npy", mmap_mode="r")
    before = rss_anon_kb()
    peak = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_anon_kb())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        idata = tallmc.sample(tallmc.LogisticRegression(X, y, intercept=False),
                              tallmc.HmcEcs(subsample=1000), chains=2, warmup=200, draws=200,
                              seed=1, progress=False)
    finally:
        done.set()
        watcher.join()
    growth_mb = (peak[0] - before) / 1024
    array_mb = X.nbytes / 2**20
    print(f"RssAnon grew {growth_mb:.1f} MB while sampling a {array_mb:.0f} MB memory-mapped X")
    assert growth_mb < 0.1 * array_mb, (growth_mb, array_mb)
    assert idata.posterior["beta"].shape == (2, 200, p)
