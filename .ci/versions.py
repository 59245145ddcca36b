"""Print the versions of gbrank's dependencies in the running environment (CI log)."""

from importlib.metadata import PackageNotFoundError, version

for name in ("numpy", "numba", "scipy", "scikit-learn", "lightgbm", "xgboost", "optuna",
             "pandas", "pyarrow", "matplotlib", "pytrec-eval-terrier", "onnxmltools",
             "onnxruntime", "treelite"):
    try:
        print(f"  {name}=={version(name)}")
    except PackageNotFoundError:
        print(f"  {name}: not installed")
