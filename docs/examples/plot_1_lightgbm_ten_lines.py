"""
LightGBM in ten lines
=====================

A gbrank objective is a LightGBM objective as it stands (``params["objective"]``), and
:func:`gbrank.lightgbm.feval` evaluates any gbrank metric, logged as
``gbrank_<name>`` beside LightGBM's own (a ``:`` written ``_``:
:func:`gbrank.lightgbm.metric_key`). Here :class:`~gbrank.objectives.LambdaRank` trains
on NDCG@10's weights and is watched on NDCG@10, ERR@10 and pair accuracy.
"""

import lightgbm as lgb
import matplotlib.pyplot as plt

from gbrank import metrics
from gbrank.datasets import make_ranking
from gbrank.lightgbm import feval
from gbrank.objectives import LambdaRank

X, y, group = make_ranking(n_queries=200, rows_per_query=20, n_features=10, seed=0)
X_train, y_train, group_train = X[:3000], y[:3000], group[:150]
X_valid, y_valid, group_valid = X[3000:], y[3000:], group[150:]

train = lgb.Dataset(X_train, y_train, group=group_train)
valid = lgb.Dataset(X_valid, y_valid, group=group_valid, reference=train)
history = {}
booster = lgb.train({"objective": LambdaRank(truncation=10), "verbose": -1},
                    train, num_boost_round=50, valid_sets=[valid],
                    feval=feval("ndcg@10", "err@10", "pair_accuracy"),
                    callbacks=[lgb.record_evaluation(history)])
print("held-out NDCG@10:", metrics.ndcg(y_valid, booster.predict(X_valid), group=group_valid, k=10))

# %%
# The metrics LightGBM logged, round by round (the keys are ``gbrank_<name>``).
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, values in history["valid_0"].items():
    ax.plot(values, label=name)
ax.set_xlabel("boosting round")
ax.set_ylabel("held-out value")
ax.legend()
fig.tight_layout()
