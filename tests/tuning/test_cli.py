"""`gbrank tune` and TuneConfig agree: every flag of a setting is built from its field,
with the field's default and documentation, so the command line and
``gbrank.tuning.tune(tasks, TuneConfig())`` run the same studies."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

pytest.importorskip("optuna")

from gbrank.tuning import TuneConfig  # noqa: E402
from gbrank.tuning._cli import FLAGS, _config, parse_args  # noqa: E402
from gbrank.tuning._config import EMBEDDED_TIMEOUT, QUICK, field_help  # noqa: E402

# Fields set otherwise: by an inverted flag, by --workers, or only from Python.
OTHER = {"progress": "--quiet", "run_trials": "--report-only", "report": "--trials-only",
         "worker": "--worker-id", "custom": None, "grace": None, "save_models": None,
         "plots": None}


def test_every_field_has_its_flag_or_is_declared_flagless():
    names = {f.name for f in dataclasses.fields(TuneConfig)}
    assert names == set(FLAGS) | set(OTHER)
    doc = TuneConfig.__doc__
    for name, flag in OTHER.items():  # the docstring says which, as the flags do
        section = doc[doc.index(f"    {name} : "):]
        section = re.split(r"\n    \w+ : |\n\n", section[1:])[0]
        assert ("No flag." in section) == (flag is None), name
        if flag is not None and flag != "--worker-id":
            assert f"``{flag}``" in section, name


def test_no_flag_runs_the_default_config(tmp_path):
    args = parse_args(["--data", str(tmp_path / "d.csv")])
    assert _config(args, None) == TuneConfig()
    assert TuneConfig().out_dir == Path("gbrank-results")


def test_quick_and_the_embedded_data_are_the_documented_exceptions(tmp_path):
    quick = parse_args(["--quick", "--data", str(tmp_path / "d.csv")])
    assert _config(quick, None) == TuneConfig(quick=True, **QUICK)
    embedded = parse_args([])
    assert _config(embedded, None) == TuneConfig(timeout=EMBEDDED_TIMEOUT)
    given = parse_args(["--quick", "--trials", "7"])  # a given flag wins over --quick
    assert _config(given, None) == TuneConfig(quick=True, **{**QUICK, "trials": 7})
    doc = " ".join(TuneConfig.__doc__.split())
    assert ("``--quick`` also sets " + ", ".join(f"``{k}={v}``" for k, v in QUICK.items())
            .replace(", ``repeats", " and ``repeats")) in doc
    assert f"``timeout`` is {EMBEDDED_TIMEOUT:g} s" in doc


def test_each_flag_says_its_field_and_default(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, flag in FLAGS.items():
        field = next(f for f in dataclasses.fields(TuneConfig) if f.name == name)
        assert f"{flag} " in text
        assert " ".join(field_help(name).split()) in text, name
        if field.default not in (None, False):
            shown = f"./{field.default}" if name == "out_dir" else str(field.default)
            assert f"Default: {shown}" in text, name
        if name in QUICK:
            assert f"{QUICK[name]} with --quick" in text, name


def test_help_is_plain_text(capsys):
    """The help of ``gbrank`` and ``gbrank tune`` comes from docstrings: the terminal gets
    their text, not their reStructuredText markup."""
    from gbrank.__main__ import main

    for run, intro in ((lambda: main(["--help"]), "python -m gbrank <command>"),
                       (lambda: parse_args(["--help"]), "gbrank tune: tune every gbrank")):
        with pytest.raises(SystemExit):
            run()
        text = capsys.readouterr().out
        assert intro in text
        assert "``" not in text and not re.search(r":\w+:`", text)


def test_a_refused_value_names_the_flag(tmp_path, capsys):
    for argv, flag in ((["--folds", "1"], "--folds"), (["--max-rounds", "0"], "--max-rounds"),
                       (["--patience", "0"], "--patience")):
        args = parse_args(["--data", str(tmp_path / "d.csv"), *argv])
        with pytest.raises(SystemExit):
            _config(args, None)
        assert capsys.readouterr().err.startswith(f"gbrank tune: error: {flag}: ")


def test_terminating_the_parent_of_workers_ends_the_workers(tmp_path):
    """SIGTERM (kill, timeout, a batch scheduler) to `gbrank tune --workers 2` ended the
    parent only; both workers went on tuning on every core (seventh probe)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "gbrank.tuning", "--quick", "--workers", "2", "--quiet",
         "--trials", "50", "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children_file = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    if not children_file.exists():
        proc.kill()
        pytest.skip("needs Linux's /proc to list a process's children")
    def is_worker(pid: str) -> bool:  # not another child (multiprocessing's tracker)
        try:
            return b"--trials-only" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    workers: list[int] = []
    deadline = time.monotonic() + 120
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        workers = [int(p) for p in children_file.read_text().split() if is_worker(p)]
    try:
        assert len(workers) == 2, "the workers never started"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) != 0
        for pid in workers:  # reaped by the parent: gone
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:  # never leave a worker behind, whatever failed
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()


def test_an_interrupted_run_says_it_resumes(monkeypatch, capsys):
    """Ctrl-C printed Optuna's and the boosters' traceback (91 lines) and nothing about
    resuming (seventh probe)."""
    from gbrank.tuning import _cli as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["--quick"]) == 130
    err = capsys.readouterr().err
    assert "interrupted. Every finished trial is stored" in err
    assert "the same command resumes the studies" in err
