"""Public metrics (plain functions on labels, scores and query structure)."""

__all__: list[str] = []
