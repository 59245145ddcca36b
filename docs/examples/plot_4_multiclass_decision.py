"""
Imbalanced multiclass: the decision rule
========================================

On imbalanced classes the most probable class (argmax) rarely says the rare ones.
:class:`~gbrank.sklearn.GBClassifier` with K classes predicts
``argmax(log p + class_offsets_)``, per-class offsets chosen to maximise macro-F1 on
out-of-fold predictions (``decision="auto"``, threshold moving for K classes;
:func:`gbrank.metrics.best_class_offsets`). The probabilities are the same; only the
rule that turns them into a class changes.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import f1_score, recall_score
from sklearn.model_selection import train_test_split

from gbrank.sklearn import GBClassifier

X, y = make_classification(3000, 10, n_informative=6, n_classes=3, n_clusters_per_class=1,
                           weights=[0.85, 0.10, 0.05], random_state=0)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, stratify=y, random_state=0)

clf = GBClassifier("native:multiclass", n_estimators=50, random_state=0).fit(X_tr, y_tr)
argmax = clf.classes_[clf.predict_proba(X_te).argmax(axis=1)]
offsets = clf.predict(X_te)
print("class offsets:", clf.class_offsets_.round(2))
print("macro-F1, argmax :", round(f1_score(y_te, argmax, average="macro"), 3))
print("macro-F1, offsets:", round(f1_score(y_te, offsets, average="macro"), 3))

# %%
# Recall of each class under both rules: the offsets trade a little of the majority
# class for the rare ones.
width = 0.38
classes = np.arange(len(clf.classes_))
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.bar(classes - width / 2, recall_score(y_te, argmax, average=None), width, label="argmax")
ax.bar(classes + width / 2, recall_score(y_te, offsets, average=None), width,
       label="argmax(log p + offsets)")
ax.set_xticks(classes, [f"class {c} ({np.mean(y == c):.0%})" for c in clf.classes_])
ax.set_ylabel("held-out recall")
ax.legend()
fig.tight_layout()
