"""Live progress of a long search in the terminal (rich)."""

from __future__ import annotations

import math
import time

from rich.console import Console
from rich.live import Live
from rich.text import Text


class SearchProgress:
    """Call with ``(trace, event)`` (a :class:`~optrules.solve.ProgressEvent`) after each slice of the search;
    redraws at most ``refresh`` times a second."""

    def __init__(self, console: Console | None = None, refresh: float = 4.0):
        self.console = console or Console(stderr=True)
        self.live = Live(Text("starting search..."), console=self.console, refresh_per_second=refresh, transient=False)
        self.live.start()
        self._last = 0.0
        self._interval = 1.0 / refresh

    def __call__(self, trace, event) -> None:
        now = time.perf_counter()
        if now - self._last < self._interval or not len(trace):
            return
        self._last = now
        remaining = trace.log10_remaining[-1]
        remaining_text = ""
        if remaining == -math.inf:
            remaining_text = "  remaining <= 0"
        elif math.isfinite(remaining):
            remaining_text = f"  remaining <= 10^{remaining:.1f}"
        self.live.update(
            Text(
                f"{trace.time[-1]:8.1f} s  best {trace.objective[-1]:.6f}  lower bound {trace.lower_bound[-1]:.6f}  "
                f"gap {trace.objective[-1] - trace.lower_bound[-1]:.6f}  {event.work:,} {event.unit}  "
                f"queue {event.queue:,}{remaining_text}"
            )
        )

    def close(self) -> None:
        self.live.stop()
