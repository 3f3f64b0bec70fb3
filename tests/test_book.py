"""The whole book in the smoke profile: every chapter executes, and the -W build renders them."""

import pytest

from rcstudy import run
from rcstudy.report import claims_from_notebook

pytestmark = pytest.mark.slow

CHAPTERS = [c for c in run.toc_chapters() if (run.CHAPTERS_DIR / f"{c}.md").exists()]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_is_published_and_rendered(smoke_book, chapter):
    assert (smoke_book / "book" / f"{chapter}.ipynb").exists()
    page = smoke_book / "_build" / "html" / "book" / f"{chapter}.html"
    assert page.exists()
    assert "Traceback" not in page.read_text()


def test_paper_chapters_check_claims_and_the_scorecard_gathers_them(smoke_book):
    papers = [c for c in CHAPTERS if c not in ("intro", "scorecard", "teaching", "benchmarks")]
    claimed = {c: claims_from_notebook(smoke_book / "book" / f"{c}.ipynb") for c in papers}
    for chapter, claims in claimed.items():
        assert claims, f"{chapter} checks no claim"
    card = (smoke_book / "_build" / "html" / "book" / "scorecard.html").read_text()
    for claims in claimed.values():
        assert claims[0].claim.split()[0] in card


def test_intro_lists_data_layout_and_models(smoke_book):
    intro = (smoke_book / "_build" / "html" / "book" / "intro.html").read_text()
    assert "$RCSTUDY_DATA/reclor/" in intro and "minilm-l6" in intro and "smollm2-135m" in intro


def test_timings_are_recorded(smoke_book):
    import json

    timings = json.loads((smoke_book / "book" / "timings.json").read_text())
    assert set(CHAPTERS) <= set(timings["smoke"])


def test_long_work_reports_progress_on_the_terminal_not_in_the_pages(smoke_book):
    """tqdm bars of the engines reach the runner's terminal (the smoke log) and no published notebook."""
    log = (smoke_book / "smoke.log").read_text(errors="replace")
    assert "fine-tune tiny-bert" in log
    for nb in (smoke_book / "book").glob("*.ipynb"):
        assert "fine-tune tiny-bert" not in nb.read_text(), nb.name
