"""
Calibrated ranking
==================

A ranking loss only orders the rows of a query: every query's scores can shift by a
constant without changing it, so a LambdaRank score cannot be read as a probability.
``calibration=α`` adds a pointwise cross-entropy term,
:math:`L = (1 - \\alpha) L_\\text{rank} + \\alpha \\sum \\ell(t, \\sigma(s))`, that pins the
scale: :math:`\\sigma(s)` becomes the probability of relevance, and
``GBRanker.predict_proba`` returns it (as scikit-learn's classifiers do: an (n, 2) array,
the second column the probability of relevance). :func:`gbrank.metrics.log_loss` judges
probabilities.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import calibration_curve

from gbrank import metrics
from gbrank.datasets import make_ranking
from gbrank.objectives import LambdaRank
from gbrank.sklearn import GBRanker

X, y, group = make_ranking(n_queries=300, rows_per_query=20, n_features=10, seed=0)
qid = np.repeat(np.arange(group.size), group)
relevant = (y >= 2).astype(float)  # relevance as 0/1 (clicks work as they are)
train, test = qid < 200, qid >= 200

probabilities = {}
for alpha in [0.0, 0.5]:
    ranker = GBRanker(LambdaRank(calibration=alpha), n_estimators=60, random_state=0)
    ranker.fit(X[train], relevant[train], qid=qid[train])
    scores = ranker.predict(X[test])
    # A pure ranker's scores through a sigmoid; a calibrated ranker's predict_proba.
    p = 1 / (1 + np.exp(-scores)) if alpha == 0 else ranker.predict_proba(X[test])[:, 1]
    probabilities[alpha] = p
    print(f"calibration={alpha}: NDCG@10 "
          f"{metrics.ndcg(relevant[test], scores, qid=qid[test], k=10):.4f}, "
          f"log loss {metrics.log_loss(relevant[test], p):.4f}")

# %%
# Reliability: observed frequency of relevance against the predicted probability.
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.plot([0, 1], [0, 1], ":", color="grey")
for alpha, p in probabilities.items():
    observed, predicted = calibration_curve(relevant[test], p, n_bins=10)
    ax.plot(predicted, observed, "o-", label=f"LambdaRank(calibration={alpha})")
ax.set_xlabel("predicted probability")
ax.set_ylabel("observed frequency")
ax.legend()
fig.tight_layout()
