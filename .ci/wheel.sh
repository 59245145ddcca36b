#!/usr/bin/env bash
# Build the wheel, install it into a clean virtual environment outside the checkout
# and run the smoke test there as an unprivileged user, so that the installed
# package directory is read-only (numba must then cache under $HOME/.cache/numba).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/gbrank-wheel.XXXXXX)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
"$repo/.venv/bin/python" -m build --wheel --outdir "$work/dist" "$repo" > "$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
echo "[wheel] built $(basename "$wheel")"
# The venv's interpreter must be executable by `nobody`: pyenv's lives under /root.
base=python3
for candidate in /usr/bin/python3 python3; do
    if runuser -u nobody -- "$(command -v "$candidate")" -c "" 2>/dev/null; then
        base="$candidate"; break
    fi
done
"$base" -m venv "$work/venv"
mkdir -p "$work/home"
chown nobody "$work/home"
cp "$repo/.ci/smoke.py" "$work/smoke.py"
# The core alone (no booster), then with the LightGBM extra.
"$work/venv/bin/python" -m pip install --quiet "$wheel" 2>&1 | grep -v "^WARNING: Location" || true
"$work/venv/bin/python" -c "import gbrank" || { echo "[wheel] install failed"; exit 1; }
(cd "$work/home" && runuser -u nobody -- env HOME="$work/home" "$work/venv/bin/python" \
    "$work/smoke.py" core)
"$work/venv/bin/python" -m pip install --quiet "$wheel[lightgbm]" 2>&1 \
    | grep -v "^WARNING: Location" || true
cd "$work/home"
runuser -u nobody -- env HOME="$work/home" "$work/venv/bin/python" "$work/smoke.py"
# A second process must find what the first compiled.
runuser -u nobody -- env HOME="$work/home" "$work/venv/bin/python" -c \
    "import time; t=time.perf_counter(); import numpy as np, gbrank; \
gbrank.metrics.ndcg(np.arange(5.0), np.arange(5.0), k=3); \
print(f'[wheel] second process: import + first metric call {time.perf_counter()-t:.2f} s')"
