"""The studies' sampler: TPE seeded per trial, so one process is reproducible and
concurrent workers draw different parameters."""

from __future__ import annotations

import zlib
from typing import Any

from gbrank._deps import require

__all__ = ["seeded_tpe", "stable_seed"]


def seeded_tpe(seed: int, **tpe_kwargs: Any) -> Any:
    """A TPE sampler whose random state is ``seed`` combined with the trial's number.

    One seeded TPESampler per process would hand every worker the same random stream:
    workers that start together would run the same parameters. Seeding each trial from
    its number keeps a single process exactly reproducible and gives concurrent trials
    different draws (TPE keeps no other state between trials)."""
    optuna = require("optuna")

    class TrialSeededTPE(optuna.samplers.BaseSampler):
        def __init__(self) -> None:
            self._number: int | None = None
            self._tpe: Any = None

        def _at(self, trial: Any) -> Any:
            if trial.number != self._number:
                self._number = trial.number
                self._tpe = optuna.samplers.TPESampler(
                    seed=(seed + 1_000_003 * trial.number) % 2**32, **tpe_kwargs)
            return self._tpe

        def infer_relative_search_space(self, study, trial):
            return self._at(trial).infer_relative_search_space(study, trial)

        def sample_relative(self, study, trial, search_space):
            return self._at(trial).sample_relative(study, trial, search_space)

        def sample_independent(self, study, trial, param_name, param_distribution):
            return self._at(trial).sample_independent(study, trial, param_name,
                                                      param_distribution)

        def before_trial(self, study, trial):
            self._at(trial).before_trial(study, trial)

        def after_trial(self, study, trial, state, values):
            self._at(trial).after_trial(study, trial, state, values)

        def reseed_rng(self) -> None:  # the seed is the trial's number by design
            pass

    return TrialSeededTPE()


def stable_seed(text: str, seed: int) -> int:
    """A sampler seed from a study's name and the run's ``seed`` (stable across
    processes and Python versions, unlike ``hash``)."""
    return (zlib.crc32(text.encode()) + seed) % (2**31)
