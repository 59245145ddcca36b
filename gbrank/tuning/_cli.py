"""``gbrank tune``: tune every gbrank objective against the boosters' own, gated by
gradient checks (also ``python -m gbrank.tuning`` and ``make tune`` in a checkout).

    gbrank tune                    # embedded default data, 3-20 min on 2 cores
    gbrank tune --quick            # smoke run, 1-3 min
    gbrank tune --data ../shared/data/rank.train --objectives lambdarank:err
    gbrank tune --data ../shared/data/MQ2008 --metric ndcg@10   # LETOR 4.0 fold 1
    gbrank tune --data train.parquet --label-col rel --qid-col qid --metric err@10
    gbrank tune --data demand.csv --label-col level --groupless   # all rows one query
    gbrank tune --workers 4 --storage postgresql://user:pw@host/db
    gbrank tune --data clicks.csv --label-col clicked --qid-col session \
        --position-col shown_at --propensity 1,0.5,0.33,0.25,0.2   # a click log

``--metric NAME`` tunes, early-stops and compares every candidate on one metric;
without it each objective is tuned for its own. Writes ``SUMMARY.md`` (the verdict
first: the objective and settings to use, its paired lead or deficit against the best
native objective, and the code that trains it), PNG plots under ``tune/``, the
recommended model of every study (booster file + JSON of parameters) under
``tune/models/`` and the studies to ``studies.db`` (re-running resumes them;
``--trials`` is the total), all in ``--out`` (default ``./gbrank-results`` in the
working directory). Bad input ends with one line on stderr and exit code 2.

Many processes share the studies of one ``--storage`` and its ``--trials`` total exactly
(:func:`gbrank.tuning._budget.run_budget`). ``--workers N`` starts N worker processes
(each runs trials only, as ``--trials-only``), waits for them and writes the report
itself (as ``--report-only``). Processes started by hand on other machines add trials
with ``--trials-only``; a normal run (or a final ``--report-only``) writes the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gbrank._help import plain_text
from gbrank.tuning._cli_data import PROG
from gbrank.tuning._cli_data import fail as _fail
from gbrank.tuning._cli_data import load_tasks as _load_tasks
from gbrank.tuning._cli_data import metric_kind as _metric_kind
from gbrank.tuning._config import EMBEDDED_TIMEOUT, QUICK, TuneConfig, field_help

# The fields of TuneConfig the command line sets, by flag; each flag's help and default
# come from TuneConfig. The others: progress (--quiet), run_trials (--report-only),
# report (--trials-only), worker (--worker-id); custom, grace, save_models and plots
# have no flag.
FLAGS = {"booster": "--booster", "trials": "--trials", "timeout": "--timeout",
         "n_folds": "--folds", "max_rounds": "--max-rounds", "patience": "--patience",
         "seed": "--seed", "storage": "--storage", "out_dir": "--out", "quick": "--quick",
         "metric": "--metric", "finalists": "--finalists", "repeats": "--repeats",
         "n_jobs": "--n-jobs", "objectives": "--objectives", "heartbeat": "--heartbeat",
         "anchor": "--anchor", "baselines": "--baselines"}
_TYPES = {"int": int, "float": float, "str": str, "Path": Path}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit code 2, no usage block
        _fail(message)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    # No abbreviated flags: --workers' children get the parent's arguments minus it.
    intro = " ".join(__doc__.split("\n\n")[0].split())
    p = _Parser(prog=PROG, description=plain_text(intro), allow_abbrev=False)
    p.add_argument("--data", type=Path, help="LETOR/SVMlight (.query file or qid:), CSV or "
                   "Parquet; a LETOR 4.0 folder of parts S1.txt … S5.txt (fold --fold: "
                   "four parts tuned on, the fifth held out) or a fold folder (train.txt, "
                   "vali.txt, test.txt); or comma-separated LETOR files tuned on together; "
                   "default: the embedded synthetic tasks")
    p.add_argument("--test-data", type=Path, help="held-out file in the same format "
                   "(default: 20%% of the queries of --data); with --position-col, a table "
                   "without that column holds true grades (in its --label-col column), "
                   "and the held-out test is judged by ndcg@10 on them")
    p.add_argument("--fold", type=int, help="the fold (1-5) of a LETOR 4.0 folder of "
                   "parts: folds 1-5 hold out parts S5, S1, S2, S3, S4 (default fold 1: "
                   "S5); refused for other data, which have no folds")
    p.add_argument("--label-col", help="label column of a CSV/Parquet table")
    p.add_argument("--qid-col", help="query-id column of a CSV/Parquet table (ranking "
                   "data need query ids, or --groupless)")
    p.add_argument("--groupless", action="store_true", help="all rows are one query "
                   "(group-less ranking): --data without query ids is tuned as one ranked "
                   "list, folds over rows; ranking data without query ids and without this "
                   "flag end the run naming both, and it is refused beside query ids "
                   "(--qid-col, a LETOR file's qid: fields or .query file)")
    p.add_argument("--position-col", help="a click log: the CSV/Parquet column of each "
                   "row's logged display position (1, 2, …); --label-col then holds clicks "
                   "(0/1). The ranking studies also search the position-bias correction "
                   "(none, ipw, unbiased, additive) and every candidate is judged by "
                   "ips_dcg@10 on held-out clicks, each divided by the propensity of its "
                   "position (needs --propensity): a metric of the clicks as labels would "
                   "reward the logged ranking's position bias")
    p.add_argument("--query-col", help="with --qid-col naming sessions (a click log): the "
                   "column of each session's query. Sessions of one query show the same "
                   "documents, so the held-out part and the folds split whole queries "
                   "(default: the sessions linked by identical feature rows); the column "
                   "is not a feature")
    p.add_argument("--propensity", help="with --position-col: comma-separated examination "
                   "probabilities rho(1),rho(2),… of positions 1, 2, … (in (0, 1]), e.g. "
                   "from a randomisation experiment; required, as no estimate learned from "
                   "the same clicks can judge them")
    p.add_argument("--drop-cols", help="comma-separated columns of a CSV/Parquet table to "
                   "leave out of the features (default: every column but the label and "
                   "qid is a feature, and must be numeric)")
    p.add_argument("--task", choices=("ranking", "binary", "multiclass"),
                   help="kind of --data (default: binary for 0/1 labels without queries, "
                   "multiclass for the labels 0 … K-1 of K > 2 classes without queries, "
                   "else ranking)")
    for name, flag in FLAGS.items():
        _add_field_flag(p, name, flag)
    p.add_argument("--workers", type=int, default=1, help="start N worker processes on "
                   "the same --storage, then write the report (default 1: this process)")
    role = p.add_mutually_exclusive_group()  # report=False, run_trials=False
    role.add_argument("--trials-only", action="store_true",
                      help=field_help("report", "False").capitalize())
    role.add_argument("--report-only", action="store_true",
                      help=field_help("run_trials", "False").capitalize())
    p.add_argument("--worker-id", type=int, help=argparse.SUPPRESS)  # worker
    p.add_argument("--quiet", action="store_true",  # progress=False
                   help=field_help("progress", "False").capitalize())
    args = p.parse_args(argv)
    _fill_defaults(args)
    if args.data is None and (args.test_data or args.label_col or args.qid_col
                              or args.drop_cols or args.groupless or args.fold is not None):
        _fail("--test-data, --label-col, --qid-col, --drop-cols, --groupless and --fold need "
              "--data (the embedded group-less task declares itself)")
    if args.groupless and args.qid_col is not None:
        _fail(f"--groupless declares all rows one query, and --qid-col {args.qid_col} names "
              "query ids: drop --groupless to rank within each query, or --qid-col")
    if args.groupless and args.task not in (None, "ranking"):
        _fail(f"--groupless declares group-less ranking (all rows one query), not --task "
              f"{args.task}")
    if args.query_col is not None and args.qid_col is None:
        _fail("--query-col names the query of each list (session) of --qid-col: name the "
              "lists with --qid-col")
    if args.data is None and args.position_col:
        _fail("--position-col names a column of --data, a CSV/Parquet click log")
    if args.propensity is not None and args.position_col is None:
        _fail("--propensity weighs the clicks of logged positions: name the position "
              "column with --position-col")
    if args.position_col is not None:
        if args.propensity is None:
            _fail("--position-col: a click log is judged by ips_dcg@10, which divides each "
                  "held-out click by the examination propensity of its logged position; "
                  "give them with --propensity rho1,rho2,... (positions 1, 2, …)")
        if args.task not in (None, "ranking"):
            _fail(f"--position-col: a click log is a ranking task, not --task {args.task}")
        if args.anchor:
            _fail("--anchor: LightGBMTunerCV judges true labels, not a click log; run "
                  "without --anchor (native lambdarank with the positions is a study)")
        try:
            # An empty entry ("1,,0.5") would shift every later propensity by one slot.
            args.propensity = [float(v) for v in args.propensity.split(",")]
        except ValueError:
            _fail(f"--propensity: {args.propensity!r} is not a comma-separated list of "
                  "numbers")
    if args.fold is not None and not 1 <= args.fold <= 5:
        _fail(f"--fold: must be an integer from 1 to 5, got {args.fold}")
    if args.workers < 1:
        _fail(f"--workers: must be an integer >= 1, got {args.workers}")
    if args.workers > 1 and (args.trials_only or args.report_only):
        _fail("--workers cannot be combined with --trials-only or --report-only")
    return args


def _add_field_flag(p: argparse.ArgumentParser, name: str, flag: str) -> None:
    """The flag of TuneConfig field ``name``: its help is the field's documentation,
    its default the field's (None here, filled in by :func:`_fill_defaults`)."""
    f = next(f for f in dataclasses.fields(TuneConfig) if f.name == name)
    if f.type == "bool":
        p.add_argument(flag, dest=name, action="store_true", help=field_help(name))
        return
    default = f.default
    if name == "timeout":
        shown = (f"none; {EMBEDDED_TIMEOUT:g} on the embedded data without --quick, so "
                 f"every study's trials stop within {EMBEDDED_TIMEOUT:g} s")
    elif default is None:
        shown = field_help(name, "None").removesuffix(".")
    else:
        shown = f"./{default}" if isinstance(default, Path) else str(default)
    if name in QUICK:
        shown += f"; {QUICK[name]} with --quick"
    kind = f.type.split(" | ")[0]
    extra = ({"choices": ("lightgbm", "xgboost")} if name == "booster" else
             {"type": _TYPES[kind], "metavar": flag[2:].upper().replace("-", "_")}
             if kind in _TYPES else {})
    help_ = f"{field_help(name)} Default: {shown}.".replace("%", "%%")
    p.add_argument(flag, dest=name, default=None, help=help_, **extra)


def _rounds_text(cfg: TuneConfig, tasks: list) -> str:
    """The round budget of the run's tasks, for the SUMMARY's first line."""
    texts = dict.fromkeys("≤ {} rounds with early stopping after {}".format(
        *cfg.rounds(t.clicks)) + (" (a click log)" if t.clicks else "") for t in tasks)
    return "; ".join(texts)


def _fill_defaults(args: argparse.Namespace) -> None:
    """Every TuneConfig flag not given takes TuneConfig's default, or ``--quick``'s
    (:data:`~gbrank.tuning._config.QUICK`); the timeout on the embedded data is
    :data:`~gbrank.tuning._config.EMBEDDED_TIMEOUT` without ``--quick``."""
    defaults = {f.name: f.default for f in dataclasses.fields(TuneConfig)}
    for name in FLAGS:
        if getattr(args, name) is None:
            setattr(args, name, QUICK[name] if args.quick and name in QUICK
                    else defaults[name])
    if args.timeout is None and args.data is None and not args.quick:
        args.timeout = EMBEDDED_TIMEOUT


def _config(args: argparse.Namespace, keys: list[str] | None) -> TuneConfig:
    """The run's TuneConfig; a value it refuses ends the run naming the flag."""
    try:
        return TuneConfig(
            **{name: getattr(args, name) for name in FLAGS
               if name not in ("objectives", "baselines")},
            objectives=keys, baselines=_split(args.baselines), progress=not args.quiet,
            run_trials=not args.report_only and args.workers == 1,
            report=not args.trials_only, worker=args.worker_id)
    except ValueError as exc:
        msg = str(exc)
        field_name = msg.split(" ", 1)[0].removesuffix(":")
        # "objectives: unknown objective ..." names its field once, as the flag
        msg = msg.removeprefix(f"{field_name}: ")
        _fail(f"{FLAGS.get(field_name, field_name)}: {msg}")
    except ImportError as exc:  # the booster, or a baseline library, is not installed
        _fail(f"--baselines: {exc}" if "--baselines" in str(exc)
              else f"--booster {args.booster}: {exc}")


def _split(text: str | list[str] | None) -> list[str] | None:
    """A comma-separated flag's entries (None when not given)."""
    if text is None or isinstance(text, list):
        return text
    return [k.strip() for k in text.split(",") if k.strip()]


def _without_workers(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--workers":
            skip = True
        elif not a.startswith("--workers="):
            out.append(a)
    return out


def _run_workers(args: argparse.Namespace, argv: list[str], cfg) -> int:
    """Start ``--workers`` processes of this script with ``--trials-only`` on one storage,
    wait for them; 0 if all ended well, else 1 (the report is written either way: a dead
    worker's running trial is retried by the others once its heartbeat is stale)."""
    from gbrank.tuning._storage import default_storage_url

    # main() opened the storage (and so created its tables) before the workers race.
    url = cfg.storage or default_storage_url(cfg.out_dir)
    child = [sys.executable, "-m", "gbrank.tuning", *_without_workers(argv), "--trials-only"]
    if not args.storage:  # every worker on the parent's database, wherever --out points
        child += ["--storage", url]
    if not args.quiet:
        print(f"[tune] {args.workers} worker processes on {_redact(url)}", flush=True)
    import signal

    # SIGTERM (kill, timeout, a batch scheduler) ends the parent without an exception,
    # and the workers went on tuning on every core: make it one. While a worker is being
    # started it waits (raised inside Popen, it would lose that worker's handle).
    state: dict[str, Any] = {"starting": True, "signal": None}

    def terminated(signum: int, frame: object) -> None:
        if state["starting"]:
            state["signal"] = signum
            return
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: no handler to install
        previous = None
    procs: list[subprocess.Popen] = []
    try:
        for i in range(args.workers):
            procs.append(subprocess.Popen([*child, "--worker-id", str(i)]))
        state["starting"] = False
        if state["signal"] is not None:
            raise SystemExit(128 + state["signal"])
        codes = [p.wait() for p in procs]
    except BaseException:  # Ctrl-C or a kill of the parent: take the workers along
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            p.wait()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    bad = [(i, c) for i, c in enumerate(codes) if c != 0]
    for i, c in bad:
        print(f"{PROG}: error: worker {i} (pid {procs[i].pid}) exited with code {c}",
              file=sys.stderr)
    return 1 if bad else 0


def _keep_other_summary(path: Path, config_line: str, quiet: bool) -> None:
    """A SUMMARY.md of another command (other data, other --objectives) in the same
    --out is kept under its time, not overwritten: its verdict may be the one to keep."""
    from gbrank.tuning._report import HELD_OUT_LISTED

    command = config_line.split("`:", 1)[0] + "`:"  # the line varies with the run
    if not path.exists():
        return
    text = path.read_text(errors="replace")
    if command in text:
        return
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(path.stat().st_mtime))
    kept = path.with_name(f"SUMMARY-{stamp}.md")
    # Its lists of held-out rows go with it (the new run writes its own under the name).
    for listed in sorted(set(HELD_OUT_LISTED.findall(text))):
        if (path.parent / f"{listed}.txt").exists():
            (path.parent / f"{listed}.txt").rename(path.parent / f"{listed}-{stamp}.txt")
            text = text.replace(f"`{listed}.txt`", f"`{listed}-{stamp}.txt`")
    kept.write_text(text)
    path.unlink()
    if not quiet:
        print(f"[tune] the SUMMARY.md of another command is kept as {kept.name}",
              flush=True)


def _check_storage(cfg) -> None:
    """Open the storage once (creating its tables): a wrong URL, a server that does not
    answer or a missing driver ends the run here, in one line."""
    from gbrank.tuning._storage import default_storage_url, open_storage

    try:
        open_storage(cfg.storage or default_storage_url(cfg.out_dir), cfg.heartbeat)
    except Exception as exc:  # SQLAlchemy's errors carry the driver's message
        msg = " ".join(str(getattr(exc, "orig", None) or exc).split()) or type(exc).__name__
        _fail(f"--storage: {_redact(msg)}")


def _redact(url: str) -> str:
    """The URL without its password, for progress lines."""
    import re

    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Optuna's and the boosters' frames say nothing a user can act on.
        print(f"{PROG}: interrupted. Every finished trial is stored (--out's studies.db, "
              "or --storage): the same command resumes the studies up to their totals "
              "(a trial cut short is not counted, and the studies then go on under new "
              "trial numbers, so their picks can differ from an uninterrupted run's)",
              file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    try:
        from gbrank.tuning import tune
        from gbrank.tuning._spaces import candidate
    except ImportError as exc:
        _fail(str(exc))
    keys = None
    if args.objectives:  # each key checked by TuneConfig
        keys = [k.strip() for k in args.objectives.split(",") if k.strip()]
    cfg = _config(args, keys)
    tasks = _load_tasks(args)
    from gbrank.tuning._cv import check_feature_names
    from gbrank.tuning._tasks import with_metric

    if cfg.metric is not None and args.data is None:
        # The embedded tasks are of both kinds: a metric judges the tasks of its own kind
        # (ranking metrics the ranking tasks, f1 or ap the binary one; losses all).
        home = _metric_kind(cfg.metric)
        tasks = [t for t in tasks if home == "pointwise" or t.kind == home] or tasks
    for t in tasks:
        try:
            check_feature_names(t.feature_names, cfg.booster)
        except ValueError as exc:
            _fail(f"--data: {exc} (--drop-cols)")
        if cfg.metric is not None:
            try:
                t.metrics = with_metric(t, cfg.metric).metrics
            except ValueError as exc:
                _fail(f"--metric: {exc} (task {t.name})")
    for t in tasks:
        if t.clicks:  # only objectives that learn from the positions
            from gbrank.tuning._spaces import click_candidates

            try:
                click_candidates(cfg.booster, t.propensity, keys)
            except ValueError as exc:
                _fail(f"--objectives: {exc}")
    if keys is not None:
        from gbrank.tuning._spaces import kinds_of

        kinds = {t.kind for t in tasks}
        for k in keys:
            if not kinds_of(k, args.booster) & kinds:
                _fail(f"--objectives: {k!r} is a {candidate(k, args.booster).kind} objective; "
                      f"the data are {'/'.join(sorted(kinds))}")
    _check_storage(cfg)
    from gbrank.tuning._folds import make_folds

    for task in tasks:  # data too small for the folds: said before any study starts
        try:
            make_folds(task, cfg.n_folds, cfg.seed)
        except ValueError as exc:
            _fail(f"--data: {task.name}: {exc}")
    argv = list(sys.argv[1:] if argv is None else argv)
    code = 0
    if args.workers > 1:
        code = _run_workers(args, argv, cfg)
    try:
        results = tune(tasks, cfg)
    except ImportError as exc:
        _fail(str(exc))
    if not cfg.report:
        return code
    if not cfg.run_trials and not any(r.status == "done" for r in results):
        # Nothing stored under these settings: keep the SUMMARY.md a run wrote before.
        missing = next((r for r in results if r.message.startswith("no study")), None)
        if missing is not None:
            _fail(f"--report-only: {missing.message}")
    from gbrank.tuning._report import write_summary

    config_line = (f"`{' '.join([PROG, *argv])}`: "
                   f"{cfg.booster}, {cfg.trials} trials per study (TPE, seed {cfg.seed}, "
                   f"median pruning; on ranking data with queries the first two are the "
                   f"booster's default tree settings and a small learner, each with "
                   f"the objective's parameters drawn), {cfg.n_folds}-fold "
                   f"CV, {_rounds_text(cfg, tasks)}, {cfg.n_jobs} booster thread(s); "
                   f"the pick: {cfg.finalists} finalists per study rescored on "
                   f"{cfg.repeats} fresh shuffle(s) of the folds, each with its own booster "
                   f"seed ({cfg.repeats * cfg.n_folds} units).")
    short = [r for r in results if r.status == "done" and r.n_complete + r.n_pruned
             < cfg.trials]
    if short:  # a budget the header states but the studies did not run
        counts = ", ".join(f"{r.key} {r.n_complete + r.n_pruned}" for r in short[:6])
        why = (f"stopped by --timeout {cfg.timeout:g} s" if cfg.timeout is not None
               else "their trials ended early (failed trials count against a cap)")
        config_line += (f" **{len(short)} of the studies ran fewer trials than that**, "
                        f"{why} ({counts}{', …' if len(short) > 6 else ''}): "
                        "their picks are barely tuned.")
    if cfg.trials < 3:
        config_line += (f" With {cfg.trials} trial(s) per study nothing is tuned: each "
                        "pick is a starting point (the booster's default tree settings, "
                        "objective parameters drawn) or a random draw.")
    hint = remark = ""
    if args.label_col:
        # Name what X leaves out: read as "every other column", a click log's position
        # and query columns became features (IPS-DCG@10 0.976 against the reported 1.044).
        left_out = [args.label_col, args.qid_col, args.query_col, args.position_col,
                    *[c.strip() for c in (args.drop_cols or "").split(",") if c.strip()]]
        left_out = [repr(c) for c in dict.fromkeys(c for c in left_out if c)]
        hint = (f"; from {args.data.name}: X = its {len(tasks[0].feature_names or [])} "
                f"feature columns (every column but {', '.join(left_out)}), y = its "
                f"{args.label_col!r} column" + (f", qid = its {args.qid_col!r} column"
                                                if tasks[0].grouped else ""))
    # Named only when the recommended code trains on positions (on a cascade-like log
    # it does not).
    position_hint = (f", position = its {args.position_col!r} column"
                     if args.label_col and args.position_col else "")
    if args.data is not None and args.data.is_file() and args.test_data is None:
        # The saved model learnt from the tuning part only; the code takes what it is given.
        part = "queries" if tasks[0].grouped else "rows"
        remark = (f" (the saved model learnt from the rows the tuner tuned on: "
                 f"{args.data.name} less the 20% of its {part} held out for the test; on "
                 "every row of the file this code learns from those too)")
    _keep_other_summary(cfg.out_dir / "SUMMARY.md", config_line, args.quiet)
    path = write_summary(cfg.out_dir / "SUMMARY.md", tasks, results,
                         config_line=config_line, wall_seconds=time.perf_counter() - t_start,
                         plot_dir=cfg.out_dir / "tune", metric=cfg.metric,
                         booster=cfg.booster, data_hint=hint, position_hint=position_hint,
                         data_remark=remark, baselines=cfg.baselines)
    if not args.quiet:
        print(f"[tune] wrote {path} in {time.perf_counter() - t_start:.0f} s", flush=True)
    failed = [r for r in results if r.status == "no trials" and r.n_fail]
    if failed and not any(r.status == "done" for r in results):  # a run that did nothing
        print(f"{PROG}: error: {failed[0].task} / {failed[0].key}: {failed[0].message}",
              file=sys.stderr, flush=True)
        return 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
