"""The rendered book in a real browser: headless Chromium opens every page of the smoke book.

A page fails on a request to any host but 127.0.0.1, a resource or image that does not load,
a JavaScript error, a link inside the book to a missing page or anchor, or an image without
alt text. A screenshot of each chapter page is kept in ``_build/screenshots/`` for people to look at.
Chromium is Debian's package (``make browser``, as root) or Playwright's; without either the test
is skipped with a message saying so, except where ``RCSTUDY_REQUIRE_BROWSER=1`` (CI) makes it fail.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from urllib.parse import urlsplit

import pytest
import yaml
from browser.check import check_site, find_chromium, site_pages

from rcstudy import run
from rcstudy.sphinxext import binder_source_url

ROOT = run.PROJECT_ROOT
SCREENSHOTS = ROOT / "_build" / "screenshots"


@pytest.fixture(scope="session")
def chromium() -> str:
    """A Chromium found on this machine; none: a plain skip (a failure where a browser is required)."""
    executable = find_chromium()
    if executable is None:
        message = ("no Chromium found (Debian: `make browser` as root; or `python -m playwright install "
                   "chromium`): the rendered pages were not checked in a browser")
        if os.environ.get("RCSTUDY_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return executable


def one_pixel_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1×1, 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff"))
            + chunk(b"IEND", b""))


def write_page(folder, name, body):
    (folder / name).write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{name}</title>'
                               f"</head><body>{body}</body></html>")


def test_the_checker_reports_each_kind_of_problem(tmp_path, chromium):
    """A hand-made site with one of each problem, and one clean page that must pass."""
    (tmp_path / "pixel.png").write_bytes(one_pixel_png())
    write_page(tmp_path, "good.html",
               '<h1 id="top">Good</h1><img src="pixel.png" alt="one pixel"><a href="good.html#top">up</a>'
               '<a href="https://example.org/">an outside link is not a request</a>')
    write_page(tmp_path, "bad.html",
               '<img src="missing.png" alt="gone"><img src="pixel.png">'
               '<a href="nowhere.html">dead</a><a href="good.html#no-such-anchor">bad anchor</a>'
               '<img src="http://remote.invalid/tracker.png" alt="remote">'
               '<script>throw new Error("boom")</script><script>console.error("logged")</script>')
    good, bad = check_site(tmp_path, ["good.html", "bad.html"], chromium)

    assert good.problems() == []
    assert bad.remote_requests == ["http://remote.invalid/tracker.png"]
    assert any("missing.png" in r and "404" in r for r in bad.failed_resources)
    assert "missing.png" in bad.broken_images
    assert bad.images_without_alt == ["pixel.png"]
    assert [link.split(" (")[0].rsplit("/", 1)[1] for link in bad.broken_links] == [
        "good.html#no-such-anchor", "nowhere.html"]
    assert any("boom" in e for e in bad.js_errors) and any("logged" in e for e in bad.js_errors)


@pytest.mark.slow
def test_every_page_of_the_smoke_book_in_chromium(smoke_book, chromium):
    html = smoke_book / "_build" / "html"
    pages = site_pages(html)
    chapters = [p for p in pages if p.startswith("book/")]
    published = [c for c in run.toc_chapters() if (smoke_book / "book" / f"{c}.ipynb").exists()]
    assert sorted(chapters) == sorted(f"book/{c}.html" for c in published)

    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    reports = check_site(html, pages, chromium, screenshots=SCREENSHOTS, screenshot_pages=set(chapters))

    problems = [p for r in reports for p in r.problems()]
    assert not problems, f"{len(problems)} problems in the rendered book:\n" + "\n".join(problems)
    shots = {r.page: r.screenshot for r in reports if r.screenshot}
    assert set(shots) == set(chapters)
    assert all(path.stat().st_size > 10_000 for path in shots.values())  # a rendered page, not a blank


def test_binder_opens_the_source_in_an_environment_that_installs_the_project():
    url = "https://mybinder.org/v2/gh/org/repo/main?urlpath=lab/tree/book/reclor.ipynb"
    assert binder_source_url(url, "book/reclor") == "https://mybinder.org/v2/gh/org/repo/main?urlpath=lab/tree/chapters/reclor.md"
    requirements = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    included = [line.split()[1] for line in requirements if line.startswith("-r ")]
    assert included and all((ROOT / "binder" / path).resolve().is_file() for path in included)
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK)
    assert "requirements-models.txt" in post_build.read_text() and "set-default-viewer" in post_build.read_text()


@pytest.mark.slow
def test_chapter_pages_offer_their_notebook_and_launch_buttons(smoke_book):
    """Each chapter page links its executed notebook (checked to exist by the browser test), and its
    Binder button opens the chapter's MyST source, which the repository holds, from the repository
    and branch named in _config.yml."""
    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    slug, branch = urlsplit(repository["url"]).path.strip("/"), repository["branch"]
    html = smoke_book / "_build" / "html"
    for notebook in sorted((smoke_book / "book").glob("*.ipynb")):
        page = (html / "book" / f"{notebook.stem}.html").read_text()
        assert f'href="../_sources/book/{notebook.name}"' in page, notebook.stem
        source = f"chapters/{notebook.stem}.md"
        assert (ROOT / source).is_file()
        assert f"mybinder.org/v2/gh/{slug}/{branch}?urlpath=lab/tree/{source}" in page, notebook.stem
        assert "urlpath=lab/tree/book/" not in page  # the built notebooks are not in the repository
    teaching = (html / "book" / "teaching.html").read_text()
    assert 'download="teaching_plan.csv"' in teaching
