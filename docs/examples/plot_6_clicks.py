"""
Learning from clicks
====================

A click log is biased by position: a row shown at rank 8 is rarely examined, so its
missing click says little, and a ranker trained naively on clicks learns the logging
ranker's order. :func:`gbrank.datasets.simulate_clicks` shows each query's top 10 to
simulated users who examine position p with probability 1/p, a fifth of the sessions in
a random order (``randomized=0.2``, a randomisation intervention); we then train on the
clicks alone and score the models on the true grades.

``position_bias="ipw"`` weights each pair by the inverse of the clicked row's known
examination probability; ``"unbiased"`` (Unbiased LambdaMART) learns those ratios with
the trees, and its estimates come back as ``position_bias_``. A learned correction can
tell position from relevance only through documents shown at several positions, which
the randomised sessions provide (:func:`gbrank.datasets.position_identifiability`
counts them; without any, ``GBRanker`` warns). From the same documents
:func:`gbrank.datasets.estimate_propensity` estimates the propensities directly.
"""

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from gbrank import metrics
from gbrank.datasets import (
    estimate_propensity,
    make_ranking,
    position_identifiability,
    simulate_clicks,
)
from gbrank.objectives import LambdaRank
from gbrank.sklearn import GBRanker

X, y, group = make_ranking(n_queries=300, rows_per_query=20, n_features=10, seed=0)
n_train = group[:200].sum()  # 200 queries to learn from, 100 to judge on
weak = X[:n_train, 0] + np.random.default_rng(0).normal(size=n_train)  # the logging ranker
log = simulate_clicks(y[:n_train], group[:200], weak, top_n=10, eta=1.0, n_sessions=5,
                      sessions="keep", randomized=0.2, seed=0)
session = np.repeat(np.arange(log.group.size), log.group)  # one query per session
print(f"{log.clicks.size} logged rows, {int(log.clicks.sum())} clicks")
found = position_identifiability(log.position, item=log.rows)  # log.rows: the documents
print(textwrap.fill(str(found), 88))
estimated = estimate_propensity(log.clicks, log.position, item=log.rows)

rho = log.examination  # the simulator's true propensities of positions 1..10
models = {"naive": LambdaRank(),
          "ipw": LambdaRank(position_bias="ipw", propensity=rho),
          "unbiased": LambdaRank(position_bias="unbiased")}
test = np.arange(n_train, y.size)
ndcg = {}
for name, objective in models.items():
    ranker = GBRanker(objective, n_estimators=60, random_state=0)
    # Positions go to the objectives that correct for them.
    shown = {"position": log.position} if objective.position_bias else {}
    ranker.fit(X[log.rows], log.clicks, qid=session, **shown)
    ndcg[name] = metrics.ndcg(y[test], ranker.predict(X[test]), group[200:], k=10)
    print(f"{name:>9}: NDCG@10 on the true grades of unseen queries {ndcg[name]:.4f}")
learned = ranker.position_bias_  # the last model's ("unbiased") estimates

# %%
# What ``"unbiased"`` learned with the trees (its t⁺(p), examination relative to
# position 1) and what ``estimate_propensity`` estimated from the log alone.
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
left.plot(learned.positions, rho / rho[0], "o-", label="true ρ(p)/ρ(1)")
left.plot(learned.positions, learned.t_plus, "s--", label="learned t⁺(p)")
left.plot(learned.positions, estimated, "^:", label="estimate_propensity")
left.set_xlabel("display position")
left.legend()
right.bar(list(ndcg), list(ndcg.values()))
right.set_ylim(min(ndcg.values()) - 0.02, max(ndcg.values()) + 0.01)
right.set_ylabel("NDCG@10, true grades")
fig.tight_layout()
