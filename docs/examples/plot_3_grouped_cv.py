"""
Grouped cross-validation with GBRanker
======================================

With queries, the ids travel with ``X`` as a column named ``qid`` (XGBoost's
``XGBRanker`` convention; ``qid_col`` names another). That column is never a feature,
and ``fit``, ``score`` and :func:`~gbrank.sklearn.make_scorer` read it, so
:class:`~sklearn.model_selection.GroupKFold`, :func:`~sklearn.model_selection.cross_val_score`
and :class:`~sklearn.model_selection.GridSearchCV` split, train and score whole queries.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

from gbrank.datasets import make_ranking
from gbrank.sklearn import GBRanker, make_scorer

X, y, group = make_ranking(n_queries=150, rows_per_query=20, n_features=10, seed=0)
df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
df["qid"] = np.repeat(np.arange(group.size), group)  # one query id per row

ndcg10 = make_scorer("ndcg@10")
scores = {}
for objective in ["ranknet", "lambdarank", "native:lambdarank"]:
    ranker = GBRanker(objective, n_estimators=40, random_state=0)
    scores[objective] = cross_val_score(ranker, df, y, groups=df["qid"], cv=GroupKFold(5),
                                        scoring=ndcg10)
    print(f"{objective:>18}: NDCG@10 {scores[objective].mean():.4f} "
          f"± {scores[objective].std():.4f}")

# %%
# A grid search over the objective's own parameters (``objective__<param>``) and the
# booster's, on the same whole-query folds.
from gbrank.objectives import LambdaRank  # noqa: E402

search = GridSearchCV(GBRanker(LambdaRank(), n_estimators=40, random_state=0),
                      {"objective__truncation": [10, 30], "num_leaves": [7, 31]},
                      cv=GroupKFold(3), scoring=ndcg10)
search.fit(df, y, groups=df["qid"])
print("best:", search.best_params_, round(search.best_score_, 4))

# %%
# NDCG@10 of each fold, per objective.
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.boxplot(list(scores.values()), showmeans=True)
ax.set_xticks(range(1, len(scores) + 1), list(scores))
ax.set_ylabel("NDCG@10 per fold")
fig.tight_layout()
