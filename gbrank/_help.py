"""Docstrings as the command lines' help: the terminal shows text, not reStructuredText."""

from __future__ import annotations

import re

__all__ = ["plain_text"]

_ROLE = re.compile(r":\w+:`~?(?:[\w.]+\.)?(\w+)`")


def plain_text(text: str) -> str:
    """``text`` without its inline markup: a cross-reference (``:func:`~a.b.name```)
    becomes its last name, code (````gbrank tune````) its text.

    Examples
    --------
    >>> from gbrank._help import plain_text
    >>> plain_text("``gbrank tune``: see :class:`~gbrank.tuning.TuneConfig`")
    'gbrank tune: see TuneConfig'
    """
    return _ROLE.sub(r"\1", text).replace("``", "")
