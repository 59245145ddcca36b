#!/usr/bin/env bash
# The fast tests against the lowest versions pyproject.toml declares (every ">=" floor
# pinned with "==" through a pip constraints file), in a venv of their own. dev brings the
# core and the extras tune, lightgbm, xgboost (all); the dask extra is added (its floor is
# tested); postgres is not (psycopg2 2.9.0 has no wheel for new Pythons; those tests skip
# there and run in the main venv), nor the experiment tools anchor and bench
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
# tests/kernels (each kernel against its slow reference) is left to the main run: the
# objectives' and metrics' tests run the same kernels against references here, and the
# floors run must keep CI short.
NUMBA_CACHE_DIR="$venv/numba-cache" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -n 2 --dist loadfile -m "not slow" --durations=15 --ignore=tests/kernels
