"""
Group-less ranking: demand levels
=================================

The seed article's task: one query of every row (no query ids), five equal demand
grades, judged by pair accuracy, the share of differently graded pairs the scores order
correctly. :class:`~gbrank.sklearn.GBRanker` with ``groupless=True`` trains on all rows
as one query of any size (LightGBM's own ``lambdarank`` refuses more than 10,000 rows per
query); the mode is declared, because a ranker given no query ids otherwise refuses to
train.

RankNet's loss is pair accuracy's smooth surrogate; LambdaRank's weights chase the top
of the list (NDCG@30 here), which this task does not score. The learning curve shows
RankNet ahead at every training size.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import KFold, learning_curve

from gbrank.datasets import make_demand_levels
from gbrank.sklearn import GBRanker

X, y = make_demand_levels(n_rows=2000, seed=0)  # 5 grades, one query
print("rows per grade:", np.bincount(y.astype(int)))

cv = KFold(4, shuffle=True, random_state=0)
sizes = np.linspace(0.2, 1.0, 4)
curves = {}
for objective in ["ranknet", "lambdarank"]:
    ranker = GBRanker(objective, n_estimators=50, random_state=0, groupless=True)
    n, _, valid = learning_curve(ranker, X, y, train_sizes=sizes, cv=cv)  # score: pair accuracy
    curves[objective] = (n, valid.mean(axis=1), valid.std(axis=1))
    print(f"{objective:>10}: held-out pair accuracy {valid[-1].mean():.3f} "
          f"± {valid[-1].std():.3f} on {n[-1]} training rows")

# %%
# Held-out pair accuracy against the number of training rows (mean ± sd over 4 folds).
fig, ax = plt.subplots(figsize=(6, 3.5))
for objective, (n, mean, sd) in curves.items():
    ax.errorbar(n, mean, yerr=sd, marker="o", capsize=3, label=objective)
ax.set_xlabel("training rows (one query)")
ax.set_ylabel("held-out pair accuracy")
ax.legend()
fig.tight_layout()
