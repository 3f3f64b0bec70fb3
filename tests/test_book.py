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


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_is_numbered_referenced_and_linked_not_inlined(smoke_book, chapter):
    """Figures are numbered figures with alt text, cited with {numref}, and their images are files
    beside the page (a page carries at most 150 KB of inline image data)."""
    import re

    html = (smoke_book / "_build" / "html" / "book" / f"{chapter}.html").read_text()
    figures = re.findall(r"<figure.*?</figure>", html, flags=re.S)
    for fig in figures:
        assert 'class="caption-number"' in fig, f"{chapter}: a figure without a number"
        assert re.search(r'<img[^>]*alt="[^"]{20,}"', fig), f"{chapter}: a figure without alt text"
    numbers = set(re.findall(r'caption-number">Fig\. (\d+)', html))
    cited = set(re.findall(r'std-numref">Fig\. (\d+)', html))
    assert numbers <= cited, f"{chapter}: figures {sorted(numbers - cited)} are never cited"
    inline = sum(len(m) for m in re.findall(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]*", html))
    assert inline <= 150_000, f"{chapter}: {inline / 1000:.0f} KB of inline image data"


def test_scorecard_counts_with_no_underpowered_claim():
    """A book whose claims all have a verdict (one chapter run alone) counts them without failing."""
    import pandas as pd

    from rcstudy import book

    card = pd.DataFrame([{"chapter": "toy", "kind": "holds", "n needed": None}]).astype({"n needed": "Int64"})
    counts = book.scorecard_counts(card)
    assert counts.loc["toy", "holds"] == 1 and counts.loc["toy", "underpowered: n needed"] == ""
    card = pd.DataFrame([{"chapter": "a", "kind": "underpowered", "n needed": 1200},
                         {"chapter": "b", "kind": "holds", "n needed": None}]).astype({"n needed": "Int64"})
    assert list(book.scorecard_counts(card)["underpowered: n needed"]) == ["1,200", "", ""]
