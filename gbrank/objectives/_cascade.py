"""What a click log says of its users: whether they look like cascade users, who stop
after a click, which every ``position_bias`` correction's position-based model does not
describe (``PositionBiasTraining`` asks at its first round)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["multi_click_shares", "warn_if_cascade"]

# A cascade-like log: sessions with two or more clicks below this share of what
# independent examination gives, once that model expects this many such sessions. On the
# click protocols' position-based logs the share was 0.54-0.72 of it, unit by unit
# (sessions without a click dropped); a cascade user's, 0
# (experiments/results/cascade_sign.md).
_CASCADE_RATIO = 0.25
_CASCADE_MIN_EXPECTED = 20.0


def multi_click_shares(y: np.ndarray, group: Any, slot: np.ndarray, k: int,
                       reduce_sum: Callable[[np.ndarray], np.ndarray] | None = None
                       ) -> tuple[float, float, float] | None:
    """Of the sessions with a click, the share with two or more, and that share under
    independent clicks at the log's per-position click rates, with the expected number
    of such sessions: ``(seen, independent, expected_count)``; ``None`` when the rows
    cannot be read as sessions of clicks (labels 0/1 in groups) or none has a click.

    ``y``: the labels, ``group``: session sizes (or None), ``slot``/``k``: each row's
    position slot and the number of slots, ``reduce_sum``: sums over the workers of a
    distributed training (None: one machine). Every worker makes the same reductions (a
    worker whose rows do not qualify adds zeros) and all get the same answer."""
    reduce_sum = reduce_sum or (lambda a: a)
    sizes = None if group is None else np.asarray(group, dtype=np.int64).ravel()
    usable = (sizes is not None and sizes.size > 0 and sizes.sum() == y.size
              and bool(np.all((y == 0.0) | (y == 1.0))))
    counts = np.zeros(2 * k + 1)
    if usable:
        counts[:k] = np.bincount(slot, weights=y, minlength=k)
        counts[k:2 * k] = np.bincount(slot, minlength=k)
    else:
        counts[2 * k] = 1.0  # rows that cannot be read as sessions of clicks
    counts = reduce_sum(counts)
    sums = np.zeros(4)  # expected ≥ 2 clicks, expected ≥ 1, seen ≥ 2, seen ≥ 1
    if usable:
        rate = counts[:k] / np.maximum(counts[k:2 * k], 1.0)
        p = np.minimum(rate[slot], 1.0 - 1e-9)
        session = np.repeat(np.arange(sizes.size), sizes)
        none = np.exp(np.bincount(session, np.log1p(-p), minlength=sizes.size))
        one = none * np.bincount(session, p / (1.0 - p), minlength=sizes.size)
        n_clicks = np.bincount(session, y, minlength=sizes.size)
        sums[:] = (np.sum(1.0 - none - one), np.sum(1.0 - none),
                   np.sum(n_clicks >= 2), np.sum(n_clicks >= 1))
    expected_two, expected_any, seen_two, seen_any = reduce_sum(sums)
    if counts[2 * k] > 0 or seen_any == 0:
        return None
    return seen_two / seen_any, expected_two / expected_any, expected_two


def warn_if_cascade(y: np.ndarray, group: Any, slot: np.ndarray, k: int, method: str,
                    reduce_sum: Callable[[np.ndarray], np.ndarray]) -> None:
    """Warn when the log's users stop after a click: every correction here assumes
    the position-based model (a position is examined whatever was clicked above
    it), and early-stopped on a cascade user's log each did worse than none
    (docs/evidence.md, "Click corrections"). The sign (:func:`multi_click_shares`): far
    fewer sessions with two clicks than independent clicks at the positions' rates
    would give. ``method`` names the correction in the message; the other arguments
    are :func:`multi_click_shares`'s."""
    shares = multi_click_shares(y, group, slot, k, reduce_sum)
    if shares is None:
        return
    seen, expected, expected_count = shares
    if expected_count >= _CASCADE_MIN_EXPECTED and seen < _CASCADE_RATIO * expected:
        import warnings

        warnings.warn(
            f"position_bias={method!r} assumes the position-based model (a "
            "position is examined whatever was clicked above it), and this log's "
            f"users look cascade-like: {seen:.1%} of its sessions with a click have "
            f"two or more clicks, where independent examination would give about "
            f"{expected:.0%}. Early-stopped on held-out IPS-DCG@10, every "
            "position-based correction did worse than none on logs of users who stop "
            "after a click (docs/evidence.md, 'Click corrections'): train without "
            "position_bias unless you can measure a correction on held-out true grades",
            UserWarning, stacklevel=5)
