"""The corrections' check of a click log's users (``PositionBiasTraining`` asks at its
first round): every ``position_bias`` correction assumes the position-based model, and
on a cascade user's log each did worse than none (docs/evidence.md, "Click
corrections"). The statistic: :mod:`gbrank._sessions`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gbrank._sessions import looks_cascade, multi_click_shares
from gbrank._warnings import warn_user

__all__ = ["ON_CASCADE", "check_users"]

#: What a correction does on a cascade-like log: refuse it (the default), warn, or train.
ON_CASCADE = ("raise", "warn", "ignore")


def check_users(y: np.ndarray, group: Any, slot: np.ndarray, k: int, method: str,
                on_cascade: str, reduce_sum: Callable[[np.ndarray], np.ndarray]) -> None:
    """Refuse (or warn, per ``on_cascade``) when the log's users stop after a click:
    far fewer sessions with two clicks than independent clicks at the positions' rates
    would give (:func:`gbrank._sessions.multi_click_shares`, whose arguments these
    are). ``method`` names the correction in the message."""
    if on_cascade == "ignore":
        return
    shares = multi_click_shares(y, group, slot, k, reduce_sum)
    if shares is None or not looks_cascade(*shares):
        return
    seen, expected, _ = shares
    text = (f"position_bias={method!r} assumes the position-based model (a position is "
            "examined whatever was clicked above it), and this log's sessions almost never "
            f"have two clicks: {seen:.1%} of those with a click, where independent clicks "
            f"at the positions' click rates would give about {expected:.0%}. Its users "
            "look like cascade users, who stop after a click (or each query has about one "
            "clickable row, which clicks alone cannot tell apart). Early-stopped on "
            "held-out IPS-DCG@10, every position-based correction did worse than none on "
            "a cascade user's log (docs/evidence.md, 'Click corrections')")
    if on_cascade == "raise":
        raise ValueError(text + ". Train without position_bias; or, if your users are "
                         "known to be position-based (a randomisation experiment) or "
                         "you have measured this correction on held-out true grades, "
                         "pass on_cascade='warn' (or 'ignore') to train with it")
    warn_user(text + " (trained as on_cascade='warn' asks)")
