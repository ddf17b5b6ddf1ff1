"""Checks that ArviZ reads the CSV files of a `tallmc sample` run ended by Ctrl-C.

Not run by cargo: run it by hand or in CI, in a virtual environment with arviz installed, after
building the binary:

    cargo build -p tallmc-cli
    python3 -m venv /tmp/az && /tmp/az/bin/pip install arviz
    /tmp/az/bin/python crates/tallmc-cli/tests/arviz_reads_interrupted.py target/debug/tallmc

It writes a small data file, starts a long run, sends SIGINT once both chains are drawing,
expects exit status 130 and summary.json marked interrupted, and checks that
`arviz.from_cmdstan` reads every chain with as many draws as summary.json reports.
"""

import json
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time

import arviz


def drawing(path: pathlib.Path, rows: int) -> bool:
    if not path.exists():
        return False
    lines = [l for l in path.read_text().splitlines() if l and not l.startswith("#")]
    return len(lines) > rows


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/debug/tallmc"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        rng = random.Random(1)
        data = tmp / "y.csv"
        data.write_text("y\n" + "".join(f"{rng.gauss(1.5, 2.0)}\n" for _ in range(20000)))
        out = tmp / "run"
        child = subprocess.Popen(
            [binary, "sample", "rwm", "--model", "gaussian-mean", "--sigma", "2",
             "--data", str(data), "--chains", "2", "--warmup", "100", "--draws", "100000000",
             "--out", str(out)],
            stderr=subprocess.PIPE,
        )
        start = time.monotonic()
        while not all(drawing(out / f"chain_{k}.csv", 20) for k in (1, 2)):
            assert time.monotonic() - start < 60, "the run did not start drawing"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        assert child.returncode == 130, (child.returncode, err.decode())
        summary = json.loads((out / "summary.json").read_text())
        assert summary["interrupted"] is True
        files = [str(out / f"chain_{k}.csv") for k in (1, 2)]
        idata = arviz.from_cmdstan(files)
        post = idata.posterior
        assert post.sizes["chain"] == 2, post
        # tallmc cuts the chains of an interrupted run to a common length, as ArviZ needs.
        counts = summary["draws_per_chain"]
        assert post.sizes["draw"] == counts[0] == counts[1] > 0, (post, counts)
        assert "mu" in post
        print(arviz.summary(idata))
        print("ok: arviz.from_cmdstan reads the interrupted run")


if __name__ == "__main__":
    main()
