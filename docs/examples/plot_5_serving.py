"""
Serving a model without gbrank
==============================

A booster trained with a custom objective knows neither the objective's link (here the
sigmoid) nor the raw score its training started from. ``save_model`` writes a model
that the booster alone predicts correctly (the start folded into the first trees, the
link recorded as the booster's own objective), so the server needs LightGBM, not
gbrank. The decision threshold is the estimator's, not the model's: ship it beside the
file.
"""

import json
import subprocess
import sys
from pathlib import Path
from tempfile import mkdtemp

import numpy as np

from gbrank.datasets import make_imbalanced
from gbrank.sklearn import GBClassifier

X, y = make_imbalanced(n_rows=2000, positive_rate=0.1, seed=0)
clf = GBClassifier("focal", n_estimators=50, random_state=0).fit(X, y)
where = Path(mkdtemp())
clf.save_model(where / "model.txt")
np.save(where / "X.npy", X)
_ = (where / "threshold.json").write_text(json.dumps({"threshold": clf.threshold_}))

# %%
# The server: a fresh Python process in which gbrank cannot be imported.
server = """
import json, sys
sys.modules["gbrank"] = None  # no gbrank here
import lightgbm as lgb, numpy as np
proba = lgb.Booster(model_file="model.txt").predict(np.load("X.npy"))
threshold = json.load(open("threshold.json"))["threshold"]
np.save("proba.npy", proba)
print("served", proba.size, "rows;", int((proba > threshold).sum()), "flagged")
"""
done = subprocess.run([sys.executable, "-c", server], cwd=where, capture_output=True,
                      text=True, check=True)
print(done.stdout.strip())

proba = np.load(where / "proba.npy")
print("largest difference from predict_proba:",
      np.abs(proba - clf.predict_proba(X)[:, 1]).max())
print("same decisions as predict:", np.array_equal(proba > clf.threshold_, clf.predict(X) == 1))
