"""Command line: ``python -m rcstudy run|build|chapters``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import bench, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rcstudy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def add_run_options(p):
        p.add_argument("chapters", nargs="*", help="chapter names (default: every chapter in _toc.yml)")
        p.add_argument("--profile", choices=run.PROFILES, default="quick")
        p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                       help="override one parameter (value parsed as YAML); repeatable")
        p.add_argument("--refresh", action="store_true", help="ignore cached results and recompute them")
        p.add_argument("--online", action="store_true",
                       help="allow HuggingFace Hub downloads (default: HF_HUB_OFFLINE=1)")
        p.add_argument("--root", type=Path, default=None,
                       help="book root to publish into (default: the project; tests use a temporary one)")

    add_run_options(sub.add_parser("run", help="execute chapters with papermill and publish the successes"))
    build = sub.add_parser("build", help="run the chapters whose inputs changed since they were published, "
                                         "then render the HTML book (-W)")
    add_run_options(build)
    build.add_argument("--no-run", action="store_true", help="only render what is already published")
    sub.add_parser("chapters", help="list the chapters in book order")
    bench.add_arguments(sub.add_parser("bench", help="time the engines against HF Trainer and lm-evaluation-harness"))
    args = parser.parse_args(argv)

    if args.command == "bench":
        return bench.run_from_args(args)
    if args.command == "chapters":
        print("\n".join(run.toc_chapters()))
        return 0
    root = (args.root or run.book_root()).resolve()
    run.prepare_book_root(root)
    if not (args.command == "build" and args.no_run):
        in_book = run.toc_chapters()
        chapters = args.chapters or [c for c in in_book if (run.CHAPTERS_DIR / f"{c}.md").exists()]
        unknown = [c for c in chapters if c not in in_book]
        if unknown:
            parser.error(f"unknown chapter(s) {', '.join(unknown)}; see `rcstudy chapters`")
        try:
            overrides = run.parse_overrides(args.param)
        except ValueError as e:
            parser.error(str(e))
        results = run.run_chapters(chapters, args.profile, overrides, online=args.online,
                                   refresh=args.refresh, root=root, skip_unchanged=args.command == "build")
        failed = [r for r in results if not r.ok]
        if failed:
            for r in failed:
                print(f"✗ {r.message}", file=sys.stderr)
            return 1
    if args.command == "build":
        return run.build_html(root)
    return 0
