"""Nothing from data or parameters is HTML: text a page shows from the data (ReCoRD's passages) or
from its parameters is shown as text, in the notebook's Markdown and in the rendered book."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import FRONT_MATTER
from rcstudy import report, run
from rcstudy.data.records import ClozeQuery, Entity
from rcstudy.settings import PROJECT_ROOT

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click me](javascript:alert(1))"
HOSTILE = f"{SCRIPT} {IMG} `tick` {LINK} *em* _u_ a|b $x^2$ {{{{ 7*7 }}}} &amp; {{sub}}`x`"


def myst_html(markdown: str) -> str:
    """``markdown`` rendered by MyST's parser with the book's extensions (raw HTML allowed, as in the book)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    extensions = {"colon_fence", "dollarmath", "amsmath", "deflist", "substitution"}
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML).render(markdown)


def unhtml(fragment: str) -> str:
    """The text of rendered HTML (tags dropped, entities decoded)."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("text", [
    HOSTILE, "- a list item\n# a heading\n> a quote\n1. one\n2) two\n% a comment\n: a definition\n(target)=",
    "    indented code?\n:::{note}\nno\n:::", "a \\ backslash, \\* and a trailing \\", "plain text: U.S. (CNN) -- 50%, it's \"quoted\"",
])
def test_md_text_renders_as_exactly_its_text(text):
    rendered = myst_html(report.md_text(text))
    assert re.fullmatch(r"<p>.*</p>\n", rendered, flags=re.S), rendered  # one paragraph, no other element
    assert "<script" not in rendered and "<img" not in rendered and "<a " not in rendered and "<code" not in rendered
    assert unhtml(rendered).strip() == "\n".join(line.lstrip() for line in text.splitlines())


def test_md_code_shows_any_text_verbatim_in_one_code_span():
    for text in (HOSTILE, "`starts with a backtick", "ends with ``", "```"):
        rendered = myst_html(report.md_code(text))
        assert re.fullmatch(r"<p><code>[^<]*</code></p>\n", rendered), rendered
        assert unhtml(rendered) == text + "\n"
    block = report.md_code_block(f"x = 1\n```\n{SCRIPT}", "ipython")
    rendered = myst_html(block)
    assert rendered.count("<pre>") == 1 and "<script" not in rendered and SCRIPT in unhtml(rendered)


def test_only_plain_http_addresses_become_links():
    assert report.md_url("https://github.com/rcstudy/rcstudy") == "<https://github.com/rcstudy/rcstudy>"
    for url in ("javascript:alert(1)", f"https://x.org/{IMG}", "https://x.org/a b"):
        assert "<a " not in myst_html(report.md_url(url))


def test_html_text_escapes_markup_and_quotes():
    assert report.html_text(f'{IMG}"') == "&lt;img src=x onerror=alert(1)&gt;&quot;"


def test_a_record_example_shows_its_data_as_text_and_keeps_the_highlight_bullets():
    from rcstudy.experiments.record import example_markdown

    passage = f"A passage {IMG}.\n- A highlight {SCRIPT}\n- `second` {LINK}"
    q = ClozeQuery(id="q", passage=passage, query=f"@placeholder {HOSTILE}",
                   entities=(Entity(0, 1, "A"), Entity(10, 10 + len(IMG), IMG)), answers=(IMG,), source="test")
    rendered = myst_html(example_markdown(q))
    assert "<script" not in rendered and "<img" not in rendered and "<a " not in rendered
    assert rendered.count("<li>") == 2  # the loader's highlight bullets stay a list
    assert IMG in unhtml(rendered) and SCRIPT in unhtml(rendered) and LINK in unhtml(rendered)


# --------------------------------------------------------------------------- a built book

HOSTILE_PAGE = FRONT_MATTER + """# Hostile

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
data = None
hostile = ""
```

```{code-cell} ipython3
:tags: [remove-input]
import pandas as pd
from IPython.display import Markdown, display

from rcstudy import report
from rcstudy.data.record import load_record
from rcstudy.experiments.record import example_markdown

display(Markdown(example_markdown(load_record().eval[0])))  # as the ReCoRD chapter shows its example
report.glue("hostile_text", Markdown(report.md_text(hostile)))
report.glue("hostile_code", Markdown(report.md_code(hostile)))
report.show_table(pd.DataFrame({hostile: [hostile]}, index=pd.Index([hostile], name="n")), hostile, hostile)
log = report.ClaimLog("hostile")
log.check("c", hostile, hostile, None, hostile)
log.glue()
```

As text: {glue:md}`hostile_text`. As code: {glue:md}`hostile_code`.
"""


def hostile_record_data(tmp_path):
    """ReCoRD's official fixture files, with hostile text at the end of the first dev passage (an
    entity of it, so a candidate and an answer too) and of its query."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "tests" / "fixtures" / "data" / "record" / "official", data / "record")
    path = data / "record" / "dev.json"
    dev = json.loads(path.read_text())
    item = dev["data"][0]
    passage = item["passage"]
    start = len(passage["text"]) + len(" Also ")
    passage["text"] += f" Also {IMG} and {HOSTILE}"
    passage["entities"].append({"start": start, "end": start + len(IMG) - 1})  # ends are inclusive
    qa = item["qas"][0]
    qa["query"] += f" {HOSTILE}"
    qa["answers"].append({"start": start, "end": start + len(IMG) - 1, "text": IMG})
    path.write_text(json.dumps(dev))
    return data


@pytest.mark.slow
def test_a_built_book_shows_hostile_data_and_parameters_as_text(tmp_path, monkeypatch):
    """The teaching page with a hostile ``timings_profile``, and a page showing a ReCoRD example whose
    passage and query are hostile, a hostile parameter glued as text and as code, in a table and in
    a claim: executed by the runner, rendered by jupyter-book -W. No tag, link or code from them
    reaches the HTML; their text does."""
    for var in ("RCSTUDY_DATA", "RCSTUDY_BOOK_ROOT", "RCSTUDY_EXPORTS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                "RCSTUDY_PREFLIGHT_DONE"):
        monkeypatch.setenv(var, "")  # run_chapters sets them for the kernels; restored after the test
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    chapters = tmp_path / "chapters"
    (chapters / "params").mkdir(parents=True)
    for page in ("intro", "teaching"):
        shutil.copy(run.CHAPTERS_DIR / f"{page}.md", chapters)
        for params in (run.PARAMS_DIR).glob(f"{page}.*.yaml"):
            shutil.copy(params, chapters / "params")
    (chapters / "hostile.md").write_text(HOSTILE_PAGE)
    (chapters / "params" / "hostile.smoke.yaml").write_text("data: tests/fixtures/data\n")
    monkeypatch.setattr(run, "CHAPTERS_DIR", chapters)
    monkeypatch.setattr(run, "PARAMS_DIR", chapters / "params")
    root = tmp_path / "root"
    run.prepare_book_root(root)
    data = str(hostile_record_data(tmp_path))
    overrides = {**{f"{page}.data": data for page in ("intro", "teaching", "hostile")},
                 "hostile": HOSTILE, "teaching.timings_profile": HOSTILE}
    results = run.run_chapters(["intro", "teaching", "hostile"], "smoke", overrides, root=root)
    assert all(r.ok for r in results), [r.message for r in results]

    import nbformat

    # the introduction links to the scorecard: a page that only has its title will do
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Scorecard")]),
                   root / "book" / "scorecard.ipynb")
    toc = root / "_build" / "_toc.hostile.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                   + "".join(f"- file: book/{page}\n" for page in ("teaching", "hostile", "scorecard")))
    exe = os.path.join(os.path.dirname(sys.executable), "jupyter-book")
    proc = subprocess.run([exe, "build", str(root), "--toc", str(toc), "-W", "--keep-going"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    pages = {name: (root / "_build" / "html" / "book" / f"{name}.html").read_text() for name in ("teaching", "hostile")}
    for name, page in pages.items():
        body = page[page.index("<main"):]  # the page's content, not the theme's scripts
        assert not re.search(r"<script>\s*alert", body), name
        assert not re.search(r"<img[^>]*onerror", body), name
        assert not re.search(r"""href=["']?\s*javascript:""", body, flags=re.I), name
        assert not re.search(r"<(em|strong)>(em|u)</\1>", body), name  # *em* and _u_ stay as typed
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "&lt;img src=x onerror=alert(1)&gt;" in body, name
        assert "{{ 7*7 }}" in body, name  # no substitution ran
    teaching, hostile = pages["teaching"], pages["hostile"]
    assert teaching.count('<span class="pre">onerror=alert(1)&gt;</span>') == 2  # in the prose, as code
    assert "(in class: a cold &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x" in teaching  # the table's caption
    as_text = "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; `tick` [click me](javascript:alert(1)) *em* _u_"
    assert f"As text: {as_text}" in hostile
    # the ReCoRD example: the passage (its highlights still a list), the query, the candidates and the answers
    assert "<li><p>Leo Marsh cancels his tour of Japan</p></li>" in hostile
    assert f"Osaka shows move to autumn Also &lt;img src=x onerror=alert(1)&gt; and {as_text}" in hostile
    assert f"before singing again. {as_text}" in hostile
    assert "Candidates:</strong> Leo Marsh, Japan, London, Blue Cedar, Tokyo, Osaka, Marsh, &lt;img src=x" in hostile
    assert "Gold answers:</strong> Leo Marsh, Marsh, &lt;img src=x onerror=alert(1)&gt;" in hostile
