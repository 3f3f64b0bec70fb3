"""``rcstudy compare``: the glued values and claim verdicts that differ between two published books."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict

from rcstudy.compare import compare_books, report
from rcstudy.report import Claim

PREFIX = "application/papermill.record/"


def glued(name: str, data: dict, prefix: str = PREFIX) -> dict:
    """An output as myst-nb's glue writes it: hidden values under papermill's record prefix, shown ones bare."""
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
            "data": {prefix + k: v for k, v in data.items()}}


def publish(root, chapter: str, values: dict[str, str], verdicts: dict[str, tuple[bool | None, str]]) -> None:
    claims = [asdict(Claim(chapter, cid, "the paper says", "a rule", "our numbers", holds, reason))
              for cid, (holds, reason) in verdicts.items()]
    outputs = [glued(k, {"text/plain": v}) for k, v in values.items()]
    outputs.append(glued(f"{chapter}_claims", {"application/json": {"claims": claims}, "text/plain": "log"}, prefix=""))
    nb = {"cells": [{"cell_type": "code", "source": "x", "metadata": {}, "outputs": outputs}], "metadata": {},
          "nbformat": 4, "nbformat_minor": 5}
    (root / "book").mkdir(parents=True, exist_ok=True)
    (root / "book" / f"{chapter}.ipynb").write_text(json.dumps(nb))


def test_the_same_book_twice_differs_in_nothing(tmp_path):
    publish(tmp_path / "a", "toy", {"toy_acc": "41.2"}, {"c1": (True, "")})
    assert all(c.same for c in compare_books(tmp_path / "a", tmp_path / "a"))


def test_markdown_values_are_compared_by_their_text(tmp_path):
    for root, text in (("a", "EASY − HARD is **18.1**"), ("b", "EASY − HARD is **9.4**")):
        publish(tmp_path / root, "toy", {}, {})
        nb_path = tmp_path / root / "book" / "toy.ipynb"
        nb = json.loads(nb_path.read_text())
        nb["cells"][0]["outputs"].append(glued("toy_gap", {"text/markdown": text, "text/plain": "<Markdown object>"}))
        nb_path.write_text(json.dumps(nb))
    (ch,) = compare_books(tmp_path / "a", tmp_path / "b")
    assert ch.values == {"toy_gap": ("EASY − HARD is **18.1**", "EASY − HARD is **9.4**")}


def test_every_moved_number_and_changed_verdict_is_listed_with_the_counts(tmp_path):
    publish(tmp_path / "a", "toy", {"toy_acc": "41.2", "toy_n": "500", "toy_old": "x"},
            {"c1": (True, ""), "c2": (None, "model at chance"), "c3": (False, "")})
    publish(tmp_path / "b", "toy", {"toy_acc": "39.8", "toy_n": "500", "toy_new": "y"},
            {"c1": (True, ""), "c2": (None, "underpowered"), "c4": (True, "")})
    (ch,) = compare_books(tmp_path / "a", tmp_path / "b")
    glued = {k: v for k, v in ch.values.items() if not k.startswith("claim ")}
    assert glued == {"toy_acc": ("41.2", "39.8"), "toy_new": (None, "y"), "toy_old": ("x", None)}
    assert ch.values["claim c4.evidence"] == (None, "our numbers")
    assert ch.verdicts == [("c2", "model at chance", "underpowered"), ("c3", "does not hold", "absent"),
                           ("c4", "absent", "holds")]
    text = report([ch])
    assert "toy_acc: 41.2  →  39.8" in text and "claim c2: model at chance → underpowered" in text
    assert "counts: 1 holds, 1 does not hold, 1 model at chance  →  2 holds, 1 underpowered" in text


def test_the_command_exits_1_on_differences_and_ignores_what_it_is_told(tmp_path):
    publish(tmp_path / "a", "toy", {"toy_minutes": "3.1"}, {})
    publish(tmp_path / "b", "toy", {"toy_minutes": "2.9"}, {})
    cmd = [sys.executable, "-m", "rcstudy", "compare", str(tmp_path / "a"), str(tmp_path / "b")]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 1
    same = subprocess.run(cmd + ["--ignore", "minutes"], capture_output=True, text=True)
    assert same.returncode == 0 and "toy: same glued values and verdicts" in same.stdout
    wrong = subprocess.run(cmd + ["--chapter", "tyo"], capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.strip() == "rcstudy: error: neither book has published tyo"


def test_a_long_value_is_shown_where_it_starts_to_differ():
    from rcstudy.compare import ChapterChanges

    head = "a warning that goes on for a while before it says anything new, " * 3
    ch = ChapterChanges("toy", values={"toy_warn": (head + "end.", head + "and the full profile would need 2 GPU hours.")})
    (line,) = report([ch])[len("toy: 1 glued values and 0 verdicts differ\n"):].splitlines()
    assert line.startswith("  toy_warn: …") and "end.  →  …" in line and "full profile would need 2 GPU hours." in line


def test_a_claims_evidence_that_changed_is_listed_even_when_its_verdict_did_not(tmp_path):
    publish(tmp_path / "a", "toy", {}, {"c1": (True, "")})
    publish(tmp_path / "b", "toy", {}, {"c1": (True, "")})
    nb_path = tmp_path / "b" / "book" / "toy.ipynb"
    nb_path.write_text(nb_path.read_text().replace("our numbers", "our other numbers"))
    (ch,) = compare_books(tmp_path / "a", tmp_path / "b")
    assert ch.values == {"claim c1.evidence": ("our numbers", "our other numbers")} and ch.verdicts == []
