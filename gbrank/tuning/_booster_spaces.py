"""The booster's side of the search spaces: the parameters searched per booster (a
ranking task with queries searches the learner's capacity and randomness too), the
points every ranking study tries first, the fixed settings, and the spaces' version that
names the stored studies. The objectives' spaces and the candidates: ``_spaces``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Param", "BOOSTER_SPACES", "BOOSTER_FIXED", "RANKING_BOOSTER_SPACES",
           "RANKING_STARTS", "SPACE_VERSION", "CATBOOST_SPACE_VERSION", "booster_space",
           "starting_points"]


@dataclass(frozen=True)
class Param:
    """One searched parameter.

    ``kind`` is ``"float"``, ``"int"`` or ``"cat"``; ``when(params)`` (optional) receives
    the parameters suggested so far (booster first, then objective) and says whether this
    one is searched at all — e.g. σ only matters when leaf values are regularised.
    """

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple = ()
    when: Callable[[dict], bool] | None = None

    def suggest(self, trial: Any, prefix: str, so_far: dict) -> Any:
        if self.when is not None and not self.when(so_far):
            return _SKIP
        key = prefix + self.name
        if self.kind == "float":
            return trial.suggest_float(key, self.low, self.high, log=self.log)
        if self.kind == "int":
            return trial.suggest_int(key, int(self.low), int(self.high), log=self.log)
        return trial.suggest_categorical(key, list(self.choices))


_SKIP = object()


BOOSTER_SPACES: dict[str, list[Param]] = {
    "lightgbm": [
        Param("learning_rate", "float", 0.02, 0.3, log=True),
        Param("num_leaves", "int", 7, 63, log=True),
        Param("min_data_in_leaf", "int", 5, 100, log=True),
        Param("feature_fraction", "float", 0.5, 1.0),
        Param("bagging_fraction", "float", 0.5, 1.0),
        Param("lambda_l1", "float", 1e-8, 10.0, log=True),
        Param("lambda_l2", "float", 1e-8, 10.0, log=True),
    ],
    "xgboost": [
        Param("eta", "float", 0.02, 0.3, log=True),
        Param("max_depth", "int", 3, 8),
        Param("min_child_weight", "float", 0.1, 20.0, log=True),
        Param("subsample", "float", 0.5, 1.0),
        Param("colsample_bytree", "float", 0.5, 1.0),
        Param("reg_alpha", "float", 1e-8, 10.0, log=True),
        Param("reg_lambda", "float", 1e-8, 10.0, log=True),
    ],
}

# The learner of every ranking study, gbrank's objectives and natives alike (issue 35,
# experiments/results/learner_attribution.md): on small sets tree capacity and randomness
# moved NDCG@10 3-6x more than the objective, towards 3 leaves, 200 rows per leaf and
# extra_trees (each 5 of 5 folds somewhere). Left out: path_smooth (cost lambdarank) and
# bagging_by_query (broken in LightGBM 4.7.0: out-of-bag rows' scores never updated).
# XGBoost: shallower trees, colsample_bynode (0.7 won 5 of 5 MQ2008 folds for LambdaRank).
# Each is BOOSTER_SPACES with these parameters replaced, and these added after the named
# one (the order of the suggestions, which seeded TPE follows, is kept).
_RANKING_CHANGES: dict[str, tuple[list[Param], dict[str, Param]]] = {
    "lightgbm": ([Param("num_leaves", "int", 3, 63, log=True),
                  Param("min_data_in_leaf", "int", 5, 200, log=True)],
                 {"min_data_in_leaf": Param("extra_trees", "cat", choices=(False, True))}),
    "xgboost": ([Param("max_depth", "int", 3, 6)],
                {"colsample_bytree": Param("colsample_bynode", "float", 0.5, 1.0)}),
}


def _ranking_space(booster: str) -> list[Param]:
    replaced, added_after = _RANKING_CHANGES[booster]
    by_name = {p.name: p for p in replaced}
    out = []
    for p in BOOSTER_SPACES[booster]:
        out.append(by_name.get(p.name, p))
        if p.name in added_after:
            out.append(added_after[p.name])
    return out


RANKING_BOOSTER_SPACES: dict[str, list[Param]] = {b: _ranking_space(b) for b in BOOSTER_SPACES}

# The first trials of every ranking study (with queries), before the sampler's own: the
# booster's defaults, so a tuned pick is never a search that missed them, and the small
# random learner that won on the small sets (learner_attribution.md: 3 leaves +0.030,
# extra_trees +0.019 on rank.train for lambdarank; XGBoost depth 4 and min_child_weight
# 10). With the default 12 trials the sampler is still mostly random (4 start-up
# trials), so without them either point is drawn rarely. Objective parameters are drawn.
RANKING_STARTS: dict[str, list[dict[str, Any]]] = {
    "lightgbm": [
        {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20,
         "feature_fraction": 1.0, "bagging_fraction": 1.0, "extra_trees": False,
         "lambda_l1": 1e-8, "lambda_l2": 1e-8},
        {"learning_rate": 0.1, "num_leaves": 3, "min_data_in_leaf": 20,
         "feature_fraction": 1.0, "bagging_fraction": 1.0, "extra_trees": True,
         "lambda_l1": 1e-8, "lambda_l2": 1e-8},
    ],
    "xgboost": [
        {"eta": 0.3, "max_depth": 6, "min_child_weight": 1.0, "subsample": 1.0,
         "colsample_bytree": 1.0, "colsample_bynode": 1.0, "reg_alpha": 1e-8,
         "reg_lambda": 1.0},
        {"eta": 0.1, "max_depth": 4, "min_child_weight": 10.0, "subsample": 1.0,
         "colsample_bytree": 1.0, "colsample_bynode": 1.0, "reg_alpha": 1e-8,
         "reg_lambda": 1.0},
    ],
}


def starting_points(booster: str, kind: str, groupless: bool = False
                    ) -> list[dict[str, Any]]:
    """The booster parameters a study of task kind ``kind`` tries first
    (:data:`RANKING_STARTS` for ranking within queries; none otherwise).

    Examples
    --------
    >>> from gbrank.tuning._booster_spaces import starting_points
    >>> [p["num_leaves"] for p in starting_points("lightgbm", "ranking")]
    [31, 3]
    >>> starting_points("lightgbm", "binary")
    []
    """
    if kind != "ranking" or groupless:
        return []
    space = {p.name: p for p in booster_space(booster, kind)}

    def inside(name: str, v: Any) -> bool:
        p = space.get(name)
        return p is not None and (v in p.choices if p.kind == "cat" else p.low <= v <= p.high)

    return [{k: v for k, v in point.items() if inside(k, v)}
            for point in RANKING_STARTS[booster]]


#: The search spaces' version, in every study's name: a study stored with other
#: parameters is not resumed (its trials lack the new ones). 2: issue 35's spaces;
#: 3: their starting points (RANKING_STARTS).
SPACE_VERSION = 3
#: The version of CatBoost's space (``--baselines catboost``), in its studies' names in
#: place of :data:`SPACE_VERSION`, so a change to one booster's space leaves the others'
#: stored studies resumable (and their samplers' seeds, which the names give, unchanged).
#: Up to 3 it was :data:`SPACE_VERSION`; 4: around its ranking losses' own defaults
#: (MVS, no L2 penalty), which start each of its studies.
CATBOOST_SPACE_VERSION = 4


def booster_space(booster: str, kind: str, groupless: bool = False) -> list[Param]:
    """The booster parameters searched for a candidate of task kind ``kind``: the
    ranking space (:data:`RANKING_BOOSTER_SPACES`) for ranking within queries, else
    :data:`BOOSTER_SPACES`. A group-less ranking task (one list of every row) keeps
    the latter: the evidence for the ranking space is on data with queries, and on one
    long list 3-leaf trees stop after a round or two.

    Examples
    --------
    >>> from gbrank.tuning._booster_spaces import booster_space
    >>> [p.name for p in booster_space("lightgbm", "ranking")][:4]
    ['learning_rate', 'num_leaves', 'min_data_in_leaf', 'extra_trees']
    >>> "extra_trees" in [p.name for p in booster_space("lightgbm", "binary")]
    False
    """
    return (RANKING_BOOSTER_SPACES if kind == "ranking" and not groupless
            else BOOSTER_SPACES)[booster]


# Fixed booster settings (binning is fixed: the Datasets are built once per fold).
BOOSTER_FIXED: dict[str, dict[str, Any]] = {
    "lightgbm": {"verbose": -1, "bagging_freq": 1, "metric": "None"},
    "xgboost": {"tree_method": "hist", "max_bin": 255, "verbosity": 0,
                "disable_default_eval_metric": 1},
}
