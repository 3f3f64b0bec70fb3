"""Command line: ``python -m rcstudy run|build|check|params|plan|chapters|bench``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__

# The command line imports the library only once it has parsed its arguments: `--version` and
# `--help` answer at once, and `--root` names the checkout before anything looks for it.
#: rcstudy.config.PROFILES (tests check that the two agree).
PROFILES = ("smoke", "quick", "full")
#: Where a smoke run publishes when no --root is given: beside, never over, the published book.
SMOKE_ROOT = Path("_build") / "smoke"


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless its help already says it or there is none to show (an
    on/off switch, a repeatable option that starts empty)."""

    def _get_help_string(self, action):
        if "(default" in (action.help or "") or action.default in (False, [], None):
            return action.help
        return super()._get_help_string(action)

def error(message: str) -> int:
    """One line on standard error, exit status 2 (a usage mistake: nothing was run)."""
    print(f"rcstudy: error: {message}", file=sys.stderr)
    return 2


def argument_table() -> argparse.ArgumentParser:
    """Every command and option of ``rcstudy`` (``bench`` declares its own, :mod:`rcstudy.bench`)."""
    parser = argparse.ArgumentParser(prog="rcstudy", description=__doc__,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add_profile_options(p):
        p.add_argument("--profile", choices=PROFILES, default="quick",
                       help="smoke: test fixtures and tiny models; quick: the real data on a CPU; full: a GPU and the Hub")
        p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                       help="override one parameter (value parsed as YAML; dotted names reach into sections, "
                            "a chapter prefix aims it at one chapter: rule.seeds=[1,2]); repeatable")

    def add_run_options(p):
        p.add_argument("chapters", nargs="*", help="chapter names (default: every chapter in _toc.yml)")
        add_profile_options(p)
        p.add_argument("--refresh", action="store_true", help="ignore cached results and recompute them")
        p.add_argument("--online", action="store_true",
                       help="allow HuggingFace Hub downloads (default: HF_HUB_OFFLINE=1)")
        p.add_argument("--root", type=Path, default=None,
                       help="book root to publish into and render (default: the checkout for quick and full, "
                            f"<checkout>/{SMOKE_ROOT} for smoke, so a smoke run never replaces the published book); "
                            "a checkout of the book given here is also the one whose chapters run")
        p.add_argument("--cluster", default=None, metavar="local|ADDRESS",
                       help="first run the chapters' heavy jobs in parallel on a Dask cluster (local: one started "
                            "here; else a scheduler address such as tcp://host:8786), whose workers share "
                            "RCSTUDY_CACHE; then the notebooks, which find the results cached")

    formatter = _DefaultsFormatter
    add_run_options(sub.add_parser("run", formatter_class=formatter,
                                   help="execute chapters with papermill and publish the successes"))
    build = sub.add_parser("build", formatter_class=formatter,
                           help="run the chapters whose inputs changed since they were published, then render the HTML book (-W)")
    add_run_options(build)
    build.add_argument("--no-run", action="store_true", help="only render what is already published")
    check = sub.add_parser("check", formatter_class=formatter,
                           help="check everything a run needs (parameters, models, data) without running anything")
    check.add_argument("chapters", nargs="*", help="chapter names (default: every chapter)")
    add_profile_options(check)
    check.add_argument("--online", action="store_true", help="Hub models need not be in the local cache")
    check.add_argument("--root", type=Path, default=None,
                        help="the book's checkout (default: the working directory or a folder above it)")
    params = sub.add_parser("params", formatter_class=formatter,
                            help="list a chapter's parameters: name, type, value in the profile, description")
    params.add_argument("chapter")
    params.add_argument("--profile", choices=PROFILES, default=None,
                        help="show this profile's values (default: the defaults)")
    params.add_argument("--root", type=Path, default=None,
                        help="the book's checkout (default: the working directory or a folder above it)")
    plan = sub.add_parser("plan", formatter_class=formatter,
                          help="list a chapter's training and scoring jobs with their FLOPs and GPU hours")
    plan.add_argument("chapter")
    add_profile_options(plan)
    plan.set_defaults(profile="full")
    plan.add_argument("--gpu", default="h100", help="the GPU the hours are estimated for (h100, a100, ...)")
    plan.add_argument("--root", type=Path, default=None,
                        help="the book's checkout (default: the working directory or a folder above it)")
    chapters_cmd = sub.add_parser("chapters", help="list the chapters in book order")
    chapters_cmd.add_argument("--root", type=Path, default=None,
                        help="the book's checkout (default: the working directory or a folder above it)")
    compare = sub.add_parser("compare", formatter_class=formatter,
                             help="list every glued value and claim verdict that differs between two published books")
    compare.add_argument("old", type=Path, help="a book root (its book/*.ipynb) or a folder of executed notebooks")
    compare.add_argument("new", type=Path, help="the same, for the other book")
    compare.add_argument("--chapter", action="append", dest="only", metavar="NAME",
                         help="compare only this chapter (repeatable; default: every chapter either book published)")
    compare.add_argument("--ignore", metavar="REGEX", default=None,
                         help="glued values whose names match are not compared (e.g. 'minutes|seconds')")
    # bench's own options are declared by rcstudy.bench, which is imported only when it runs
    sub.add_parser("bench", add_help=False, help="time the engines against HF Trainer and lm-evaluation-harness "
                                                 "(rcstudy bench --help lists its options)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = argument_table()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    use_checkout(args)

    from . import run

    if args.command == "bench":
        from . import bench

        bench_parser = bench.add_arguments(argparse.ArgumentParser(prog="rcstudy bench",
                                                                   formatter_class=_DefaultsFormatter))
        return bench.run_from_args(bench_parser.parse_args(rest))
    if args.command == "compare":
        return show_comparison(args.old, args.new, args.only, args.ignore)
    if args.command == "chapters":
        print("\n".join(run.toc_chapters()))
        return 0
    if args.command == "params":
        return show_params(args.chapter, args.profile)
    if args.command == "plan":
        return show_plan(args.chapter, args.profile, args.gpu, args.param)
    return run_book(args)


def run_book(args: argparse.Namespace) -> int:
    """``rcstudy run``, ``build`` and ``check``: every mistake said before any chapter runs."""
    from . import run

    if getattr(args, "cluster", None) and args.refresh:
        return error("--refresh cannot go with --cluster: the notebooks would compute again what the cluster "
                     "computed; empty the results cache (RCSTUDY_CACHE) instead")
    if args.command == "build" and not mathjax_ready():
        return error("MathJax is not in _assets/mathjax, so the book's formulas would show as raw TeX: "
                     "run `make mathjax` (npm fetches it once; `make env` does too)")
    in_book = run.toc_chapters()
    chapters = getattr(args, "chapters", None) or [c for c in in_book if (run.CHAPTERS_DIR / f"{c}.md").exists()]
    unknown = [c for c in chapters if c not in in_book]
    if unknown:
        return error(f"unknown chapter(s) {', '.join(unknown)}; see `rcstudy chapters`")
    renders_only = args.command == "build" and args.no_run
    if not renders_only:
        overrides = checked_overrides(args, chapters)
        if not isinstance(overrides, dict):
            return overrides  # the exit status of a mistake, or of `check`
    root = publish_root(args).resolve()
    run.prepare_book_root(root)
    if not renders_only:
        front = in_book[0]  # a book renders from its first page: a build of some chapters runs it once too
        if args.command == "build" and front not in chapters and not (root / "book" / f"{front}.ipynb").exists():
            chapters = [front, *chapters]
        results = run.run_chapters(chapters, args.profile, overrides, online=args.online,
                                   refresh=args.refresh, root=root, skip_unchanged=args.command == "build",
                                   cluster=args.cluster)
        failed = [r for r in results if not r.ok]
        if failed:
            for r in failed:
                print(f"✗ {r.message}", file=sys.stderr)
            return 1
    if args.command == "build":
        return run.build_html(root)
    return 0


def checked_overrides(args: argparse.Namespace, chapters: list[str]) -> dict | int:
    """The ``-p`` overrides once the parameters, models and data of ``chapters`` are checked; an
    exit status instead where something is wrong (2), or for ``check`` when all is well (0)."""
    from . import run
    from .config import ConfigError

    try:
        overrides = run.parse_overrides(args.param)
    except ConfigError as e:
        return error(str(e))
    # `run` and `build` check the models and data themselves, right before the first chapter
    _, problems = run.preflight(chapters, args.profile, overrides, online=args.online, deep=args.command == "check")
    for p in problems:
        print(f"✗ {p}", file=sys.stderr)
    if problems:
        return 2
    if args.command == "check":
        print(f"ok: {', '.join(chapters)} ({args.profile})")
        return 0
    return overrides


def show_comparison(old: Path, new: Path, chapters: list[str] | None, ignore: str | None) -> int:
    """``rcstudy compare``: 0 when the two books agree, 1 when something differs, 2 on bad input."""
    import re

    from .compare import compare_books, report

    try:
        changes = compare_books(old, new, chapters, ignore)
    except (FileNotFoundError, re.error) as e:
        return error(str(e))
    print(report(changes))
    return 0 if all(c.same for c in changes) else 1


def is_checkout(folder: Path) -> bool:
    """rcstudy.settings.is_project, without importing the library first."""
    return (folder / "_toc.yml").is_file() and (folder / "chapters").is_dir()


def use_checkout(args: argparse.Namespace) -> None:
    """Name the book's checkout for the library (``$RCSTUDY_ROOT``) before it is imported: the
    ``--root`` of a command that reads one, or a run's ``--root`` that is a checkout itself."""
    root = getattr(args, "root", None)
    if root is None or os.environ.get("RCSTUDY_ROOT"):
        return
    if args.command in ("params", "plan", "check", "chapters") or is_checkout(root):
        os.environ["RCSTUDY_ROOT"] = str(root.expanduser().resolve())


def mathjax_ready() -> bool:
    """Whether the MathJax the book serves itself (``_config.yml``'s mathjax_path) is in the checkout."""
    from .settings import project_root

    return (project_root() / "_assets" / "mathjax" / "tex-chtml.js").is_file()


def publish_root(args: argparse.Namespace) -> Path:
    """Where a run publishes and a build renders: ``--root``, else ``$RCSTUDY_BOOK_ROOT``, else the
    checkout, except for the smoke profile, whose tiny models' numbers must never replace the
    published book: it goes to :data:`SMOKE_ROOT` in the checkout."""
    from .settings import book_root, project_root

    if args.root is not None:
        return args.root
    if args.profile == "smoke" and not os.environ.get("RCSTUDY_BOOK_ROOT"):
        return project_root() / SMOKE_ROOT
    return book_root()


def show_params(chapter: str, profile: str | None) -> int:
    """Print a chapter's parameters as a table."""
    from . import run
    from .chapters import config_class
    from .config import ConfigError

    if chapter not in run.toc_chapters():
        return error(f"unknown chapter {chapter!r}; see `rcstudy chapters`")
    cls = config_class(chapter)
    if cls is None:
        return error(f"chapter {chapter!r} declares no Config; its parameters are in {run.PARAMS_DIR}")
    try:
        rows = cls.describe(profile)
    except ConfigError as e:
        return error(str(e))
    width = max(len(r["name"]) for r in rows) if rows else 0
    types = max(len(r["type"]) for r in rows) if rows else 0
    print(f"{chapter} parameters ({profile or 'defaults'}); set with -p NAME=VALUE")
    for r in rows:
        value = "" if r["value"] == "" else f" = {r['value']!r}"
        print(f"  {r['name']:<{width}}  {r['type']:<{types}}{value}  — {r['description']}")
    return 0


def show_plan(chapter: str, profile: str, gpu: str, params: list[str]) -> int:
    """Print a chapter's jobs with their FLOPs and estimated hours on ``gpu``, and the totals."""
    import pandas as pd

    from . import plan as planning
    from . import run
    from .config import ConfigError
    from .errors import RcstudyError

    try:
        table = planning.plan(chapter, profile, gpu, run.parse_overrides(params))
    except (planning.PlanError, ConfigError, RcstudyError) as e:
        return error(str(e).splitlines()[0])
    shown = table.drop(columns="note").astype({"seed": object, "fold": object}).fillna({"seed": "", "fold": ""})
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print(shown.to_string(float_format=lambda x: f"{x:.3g}", na_rep="n/a"))
    for name, note in table["note"].items():
        if note:
            print(f"  {name}: {note}")
    unknown = int(table["PFLOPs"].isna().sum())
    if unknown == len(table):
        print(f"\ntotal: {len(table)} job(s), of unknown size")
    else:
        print(f"\ntotal: {len(table)} jobs, {table['PFLOPs'].sum():.3g} PFLOPs, {table['GPU hours'].sum():.3g} GPU hours "
              f"on {gpu}" + (f" ({unknown} job(s) of unknown size not counted)" if unknown else ""))
    print(planning.describe_plan(table))
    return 0

