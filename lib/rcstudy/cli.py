"""Command line: ``python -m rcstudy run|build|check|params|plan|chapters|bench``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, bench, run
from .config import ConfigError
from .plan import GPUS



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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rcstudy", description=__doc__,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add_profile_options(p):
        p.add_argument("--profile", choices=run.PROFILES, default="quick",
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
                       help="book root to publish into (default: the project; tests use a temporary one)")
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
    params = sub.add_parser("params", formatter_class=formatter,
                            help="list a chapter's parameters: name, type, value in the profile, description")
    params.add_argument("chapter")
    params.add_argument("--profile", choices=run.PROFILES, default=None,
                        help="show this profile's values (default: the defaults)")
    plan = sub.add_parser("plan", formatter_class=formatter,
                          help="list a chapter's training and scoring jobs with their FLOPs and GPU hours")
    plan.add_argument("chapter")
    add_profile_options(plan)
    plan.set_defaults(profile="full")
    plan.add_argument("--gpu", default="h100", help=f"the GPU the hours are estimated for: {', '.join(GPUS)}")
    sub.add_parser("chapters", help="list the chapters in book order")
    bench.add_arguments(sub.add_parser("bench", formatter_class=formatter,
                                       help="time the engines against HF Trainer and lm-evaluation-harness"))
    args = parser.parse_args(argv)

    if args.command == "bench":
        return bench.run_from_args(args)
    if args.command == "chapters":
        print("\n".join(run.toc_chapters()))
        return 0
    if args.command == "params":
        return show_params(args.chapter, args.profile)
    if args.command == "plan":
        return show_plan(args.chapter, args.profile, args.gpu, args.param)
    if getattr(args, "cluster", None) and args.refresh:
        return error("--refresh cannot go with --cluster: the notebooks would compute again what the cluster "
                     "computed; empty the results cache (RCSTUDY_CACHE) instead")
    in_book = run.toc_chapters()
    chapters = getattr(args, "chapters", None) or [c for c in in_book if (run.CHAPTERS_DIR / f"{c}.md").exists()]
    unknown = [c for c in chapters if c not in in_book]
    if unknown:
        return error(f"unknown chapter(s) {', '.join(unknown)}; see `rcstudy chapters`")
    if args.command == "check" or not (args.command == "build" and args.no_run):
        try:
            overrides = run.parse_overrides(args.param)
        except ConfigError as e:
            return error(str(e))
        # `run` and `build` check the models and data themselves, right before the first chapter
        _, problems = run.preflight(chapters, args.profile, overrides, online=args.online,
                                    deep=args.command == "check")
        for p in problems:
            print(f"✗ {p}", file=sys.stderr)
        if problems:
            return 2
        if args.command == "check":
            print(f"ok: {', '.join(chapters)} ({args.profile})")
            return 0
    root = (args.root or run.book_root()).resolve()
    run.prepare_book_root(root)
    if not (args.command == "build" and args.no_run):
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


def show_params(chapter: str, profile: str | None) -> int:
    """Print a chapter's parameters as a table."""
    from .chapters import config_class

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

