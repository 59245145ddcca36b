#!/usr/bin/env bash
# The fast tests against the lowest versions pyproject.toml declares (every ">=" floor
# pinned with "==" through a pip constraints file), in a venv of their own. dev brings the
# core and the extras tune, lightgbm, xgboost (all); the dask extra is added (its floor is
# tested); postgres is not (psycopg2 2.9.0 has no wheel for new Pythons; those tests skip
# there and run in the main venv), nor the experiment tools anchor, bench and catboost
# (tests/test_install.py checks this list).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${GBRANK_MIN_VENV:-/tmp/gbrank-min-venv}"
python3 "$repo/.ci/min_versions.py" dev dask > "$venv.constraints.txt"
echo "[min-versions] constraints: $(tr '\n' ' ' < "$venv.constraints.txt")"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
"$venv/bin/python" -m pip install --quiet -c "$venv.constraints.txt" -e "$repo[dev,dask]" 2>&1 \
    | grep -v "^WARNING: Location" || true
echo "[min-versions] installed:"
"$venv/bin/python" "$repo/.ci/versions.py"
cd "$repo"
# A cache directory of its own: this numba version must not evict the main venv's cache.
# What runs here: every test of gbrank's use of its dependencies (the adapters, estimators,
# tuning, dask, datasets, export, docs, compilation, validation, registry, training, ...),
# and of the pure-math tests (tests/kernels, tests/metrics, tests/objectives: gbrank's own
# arithmetic against slow references, whose cost is numba compiling every form of every
# kernel) only those marked `floors` (tests/conftest.py marks the others main_only): each
# kernel once against its reference on the floor numba and NumPy, and the comparisons with
# LightGBM, XGBoost, scikit-learn and trec_eval. The main run (make test) runs them all.
NUMBA_CACHE_DIR="$venv/numba-cache" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -n 2 --dist loadfile -m "not slow and not main_only" --durations=15
