"""The progress bar of :func:`tallmc.sample` where the command's own bar cannot be drawn.

On a terminal the Rust side draws its bar on the process's stderr (file descriptor 2), as the
``tallmc`` command does. In a Jupyter notebook file descriptor 2 goes to the kernel's log, not
to the notebook, so there this module draws a text bar on ``sys.stderr`` (the notebook's
output) from the counts the run publishes about every 100 ms. Elsewhere (output redirected to a
log file) no bar is drawn.
"""

from __future__ import annotations

import os
import sys
import time

#: No bar for runs shorter than this (seconds): most small runs finish before it appears.
SHOW_AFTER = 2.0
#: Redraw at most this often (seconds).
REDRAW_EVERY = 0.5
_WIDTH = 24


def _in_notebook() -> bool:
    """Whether this is an IPython kernel (Jupyter, VS Code notebooks…)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # an IPython too old or too new for get_ipython: no notebook bar
        return False
    return ip is not None and getattr(ip, "kernel", None) is not None


def where_to_draw(progress: bool) -> str | None:
    """``"terminal"`` (the Rust side draws on fd 2), ``"python"`` (this module draws on
    ``sys.stderr``) or ``None`` (no bar)."""
    if not progress:
        return None
    if _in_notebook():
        return "python"
    try:
        if os.isatty(2):
            return "terminal"
    except OSError:
        pass
    return None


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


class TextBar:
    """A one-line bar rewritten in place with ``\\r``, as notebooks render it::

        tallmc hmc-ecs  [##########..............]  41%  3,280/8,000 iterations  0:05, ~0:07 left
    """

    def __init__(self, label: str, stream=None, clock=time.monotonic):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.last_drawn = None
        self.shown = False
        self.line = ""

    def text(self, message: str, done: int, total: int) -> str:
        """The bar's line for these counts."""
        elapsed = self.clock() - self.start
        if total <= 0:
            return f"{self.label}  setup: {message or 'starting'}  {_clock(elapsed)}"
        fraction = min(done / total, 1.0)
        filled = int(round(fraction * _WIDTH))
        left = ""
        if 0 < fraction < 1:
            left = f", ~{_clock(elapsed * (1 - fraction) / fraction)} left"
        return (f"{self.label}  [{'#' * filled}{'.' * (_WIDTH - filled)}]  "
                f"{100 * fraction:3.0f}%  {done:,}/{total:,} iterations  "
                f"{_clock(elapsed)}{left}")

    def __call__(self, message: str, done: int, total: int) -> None:
        """Receives the run's counts (the extension calls this about every 100 ms)."""
        now = self.clock()
        if now - self.start < SHOW_AFTER:
            return
        finished = total > 0 and done >= total
        if not finished and self.last_drawn is not None and now - self.last_drawn < REDRAW_EVERY:
            return
        line = self.text(message, done, total)
        pad = " " * max(len(self.line) - len(line), 0)
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self.line, self.last_drawn, self.shown = line, now, True

    def close(self) -> None:
        """Ends the bar's line (if one was drawn)."""
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
