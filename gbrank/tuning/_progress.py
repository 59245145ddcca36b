"""Progress display of a tuning run: one updating line on a terminal, quiet lines
elsewhere (CI, worker processes)."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """One updating line on a terminal; a quiet line every few trials elsewhere (CI)."""

    def __init__(self, enabled: bool, worker: int | None = None) -> None:
        self.enabled = enabled
        # Workers share the parent's terminal: plain lines, each naming its worker.
        self.tty = enabled and worker is None and sys.stdout.isatty()
        self.tag = "[tune]" if worker is None else f"[tune w{worker}]"
        self.t0 = time.perf_counter()

    def _fmt(self, sec: float) -> str:
        sec = max(0, int(sec))
        return f"{sec // 60}:{sec % 60:02d}"

    def trial(self, label: str, done: int, total: int, best: float | None, per_trial: float):
        """After a trial: ``done`` of ``total``, the best value so far and the time
        left at ``per_trial`` seconds a trial."""
        if not self.enabled:
            return
        best_s = "—" if best is None else f"{best:.4f}"
        line = (f"{self.tag} {label}: {done}/{total} trials, best {best_s}, elapsed "
                f"{self._fmt(time.perf_counter() - self.t0)}, study remaining "
                f"~{self._fmt((total - done) * per_trial)}")
        if self.tty:
            print("\r" + line.ljust(110), end="", flush=True)
        elif done == total or done % 5 == 0:
            print(line, flush=True)

    def line(self, text: str) -> None:
        """One line of news (a study's start, result or rejection)."""
        if self.enabled:
            print(("\n" if self.tty else "") + self.tag + " " + text, flush=True)
