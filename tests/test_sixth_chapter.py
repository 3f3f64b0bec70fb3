"""A new paper adds files and edits no shared list.

In a copy of the project, a toy sixth chapter is added as a new paper would be — a loader over a
fixture, a papers module with its numbers and one claim, an experiments module, a page and its
profile files — plus its line in ``_toc.yml`` and its entry in ``references.bib``, and nothing
else. The copy's own library then lists the dataset, the paper and the chapter, checks and runs
the chapter in the smoke profile, counts its claim on the scorecard, plans its jobs and renders
the book with ``-W``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rcstudy.settings import PROJECT_ROOT

LOADER = '''"""Toy: a two-option quiz in JSON Lines, one ``{"id", "question", "options", "label"}`` a line."""

from __future__ import annotations

import json

from ..errors import DataFormatError
from .records import MCItem
from .registry import DatasetInfo, dataset_file

SPLITS = ("train", "test")


def load(split: str) -> list[MCItem]:
    path = dataset_file("toy", f"{split}.jsonl")
    items = []
    for line, text in enumerate(path.read_text().splitlines(), 1):
        try:
            obj = json.loads(text)
            items.append(MCItem(str(obj["id"]), "", obj["question"], tuple(obj["options"]), int(obj["label"])))
        except (ValueError, KeyError, TypeError) as e:
            raise DataFormatError(path, f"unreadable item ({e})", line=line) from None
    return items


def splits(source: str = "folder") -> dict[str, tuple[str, list]]:
    return {s: ("mc", load(s)) for s in SPLITS}


RELEASES = (DatasetInfo("toy", "toy", ("train.jsonl", "test.jsonl"), "made for the test", "CC0", splits=splits),)
'''

PAPER = '''"""Published numbers of the toy paper."""

from ..claims import Above, ClaimSpec, chance_null
from ..stats import Interval
from . import Citation, Published

CITATION = Citation(key="toy2026majority", title="A Majority Baseline", authors="Ann Toy", venue="Toy Workshop",
                    year=2026, url="https://example.org/toy")
NUMBERS = [Published("toy", "Table 1", "Majority", "Test", 75.0)]
CLAIMS = [
    ClaimSpec("majority-above-chance", "The majority answer beats chance ({published:.0f}% on Test).",
              "the 95% interval of the majority answer's test accuracy lies above 50%",
              Above("acc", 50.0), paper={"acc": Interval(75.0, 70.0, 80.0, 0.95, 200), "published": 75.0},
              source="Table 1, Majority row", null={"acc": chance_null(200, k=2)},
              null_what="a guesser between two options on 200 questions"),
]
'''

EXPERIMENTS = '''"""Toy: how often the majority answer of training is right on test."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .. import papers
from ..config import ChapterConfig, param
from ..data import toy
from ..report import ChapterResults, ClaimLog
from ..stats import bootstrap_ci


@dataclass(frozen=True)
class Config(ChapterConfig):
    chapter = "toy"
    datasets = ("toy",)
    seed: int = param(0, "seed of the bootstrap", ge=0)


def run(cfg: Config, rt=None) -> ChapterResults:
    train, test = toy.load("train"), toy.load("test")
    majority = Counter(item.label for item in train).most_common(1)[0][0]
    acc = bootstrap_ci([item.label == majority for item in test], scale=100, seed=cfg.seed)
    log = ClaimLog("toy")
    log.judge("majority-above-chance", {"acc": acc}, f"majority accuracy {acc}")
    table = pd.DataFrame({"paper": [papers.value("toy", "Table 1", "Majority", "Test")], "ours": [str(acc)]},
                         index=["Majority"])
    return ChapterResults({"toy_table": table}, {"toy_n_test": len(test)}, log)


def jobs(cfg: Config) -> list:
    return []
'''

PAGE = '''---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Toy: a majority baseline

{cite:t}`toy2026majority` report that the majority answer beats chance. The test has
{glue:text}`toy_n_test` questions.

```{code-cell} ipython3
:tags: [parameters, hide-cell]
from typing import Optional

profile: str = "quick"
data: Optional[str] = None
seed: Optional[int] = None
```

```{code-cell} ipython3
:tags: [remove-cell]
from rcstudy.experiments import toy as ex
from rcstudy.notebook import chapter_config

cfg = chapter_config(ex.Config, globals())
```

```{code-cell} ipython3
:tags: [remove-cell]
from rcstudy import report

res = ex.run(cfg)
report.glue_facts(res.facts)
```

```{code-cell} ipython3
:tags: [remove-input]
report.show_table(res.tables["toy_table"], "toy_table", "The majority answer, the paper's and ours")
res.claims.glue()
res.claims
```
'''

BIB = '''
@inproceedings{toy2026majority,
  title = {A Majority Baseline},
  author = {Toy, Ann},
  booktitle = {Toy Workshop},
  year = {2026},
}
'''

#: What the copy holds: the project as a checkout has it (no build output, caches or data).
COPIED = ("lib", "chapters", "_config.yml", "_toc.yml", "references.bib", "_assets", "tests/fixtures")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sixth") / "project"
    for name in COPIED:
        src, dst = PROJECT_ROOT / name, root / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "mathjax"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    if (PROJECT_ROOT / "_assets" / "mathjax").is_dir():  # large: linked, not copied
        (root / "_assets" / "mathjax").symlink_to(PROJECT_ROOT / "_assets" / "mathjax")
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    lib = root / "lib" / "rcstudy"
    (lib / "data" / "toy.py").write_text(LOADER)
    (lib / "papers" / "toy.py").write_text(PAPER)
    (lib / "experiments" / "toy.py").write_text(EXPERIMENTS)
    (root / "chapters" / "toy.md").write_text(PAGE)
    for profile in ("smoke", "quick", "full"):
        (root / "chapters" / "params" / f"toy.{profile}.yaml").write_text(
            f"profile: {profile}\n" + ("data: tests/fixtures/data\n" if profile == "smoke" else ""))
    toc = root / "_toc.yml"
    toc.write_text(toc.read_text().replace("  - file: book/teaching\n", "  - file: book/toy\n  - file: book/teaching\n"))
    (root / "references.bib").write_text((root / "references.bib").read_text() + BIB)
    data = root / "tests" / "fixtures" / "data" / "toy"
    data.mkdir()
    for split, n in (("train", 12), ("test", 40)):
        rows = [{"id": f"{split}{k}", "question": f"Question {k}?", "options": ["yes", "no"],
                 "label": 0 if k % 5 else 1} for k in range(n)]
        (data / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    # the only files of the project that changed: the table of contents and the bibliography
    changed = {p for p, content in before.items() if (root / p).read_bytes() != content}
    assert changed == {Path("_toc.yml"), Path("references.bib")}
    return root


def rcstudy(project: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(project / "lib"), "RCSTUDY_CACHE": str(project / ".cache" / "results"),
           "RCSTUDY_DATA": str(project / "tests" / "fixtures" / "data")}
    env.pop("RCSTUDY_BOOK_ROOT", None)
    return subprocess.run([sys.executable, "-m", "rcstudy", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_the_registries_list_the_new_paper(project):
    code = ("from rcstudy import papers; from rcstudy.data.registry import DATASETS; "
            "from rcstudy.chapters import toc_chapters, config_class; "
            "print(papers.PAPERS, list(DATASETS), toc_chapters(), config_class('toy').datasets)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(project / "lib")})
    assert proc.returncode == 0, proc.stderr
    assert "'toy'" in proc.stdout.split(")")[0] and "toy" in proc.stdout
    chapters = rcstudy(project, "chapters")
    assert chapters.returncode == 0 and "toy" in chapters.stdout.split(), chapters.stderr
    params = rcstudy(project, "params", "toy")
    assert params.returncode == 0 and "seed" in params.stdout, params.stderr
    plan = rcstudy(project, "plan", "toy", "--profile", "full")
    assert plan.returncode == 0, plan.stderr


def test_the_new_chapter_runs_counts_its_claim_and_renders(project):
    book = project / "book-root"
    run = rcstudy(project, "build", "--profile", "smoke", "--root", str(book), "intro", "toy", "scorecard")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    html = (book / "_build" / "html" / "book" / "toy.html").read_text()
    assert "A majority baseline" in html and "The majority answer beats chance" in html
    scorecard = (book / "_build" / "html" / "book" / "scorecard.html").read_text()
    assert "The majority answer beats chance" in scorecard
