"""Text a user passes as a parameter is data: it reaches the kernel only as a Python literal.

The payloads are those an attacker would try on the command line: YAML tags that build objects
(``!!binary``, ``!!python/...``), an alias bomb, and strings that try to close papermill's quotes.
"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from conftest import FRONT_MATTER
from rcstudy import run
from rcstudy.settings import PROJECT_ROOT

CHAPTER = FRONT_MATTER + """# Echo

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
note = ""
```

```{code-cell} ipython3
import json
print("NOTE=" + json.dumps(note))
```
"""

ESCAPES = [
    '"); open("{marker}", "w"); ("',
    "'); open('{marker}', 'w'); ('",
    '\\"); open("{marker}", "w"); #',
    '"""; open("{marker}", "w"); """',
    '{{note}}\n__import__("os").system("touch {marker}")',
]


@pytest.fixture
def echo_chapter(tmp_path, chapter_folder):
    chapter_folder("echo", CHAPTER)
    return tmp_path / "book-root"


def test_strings_that_try_to_close_the_quotes_stay_strings(echo_chapter, tmp_path):
    marker = tmp_path / "PWNED"
    for escape in ESCAPES:
        note = escape.format(marker=marker)
        result = run.execute_chapter("echo", "smoke", {"note": note}, root=echo_chapter, progress=False)
        assert result.ok, result.message
        nb = nbformat.read(echo_chapter / "book" / "echo.ipynb", as_version=4)
        printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
        import json
        assert "NOTE=" + json.dumps(note) in printed
        assert not marker.exists(), escape


@pytest.mark.parametrize("value", [
    "{train_steps: !!binary aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ3RvdWNoIFBXTkVEJyk=}",
    "!!python/object/apply:os.system ['touch PWNED']",
    "{train_steps: !!set {1, 2}}",
    "[&a [1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], [*b,*b,*b,*b,*b,*b,*b,*b,*b]]",
])
def test_payloads_in_a_parameter_value_stop_the_run_in_one_line(tmp_path, value):
    root = tmp_path / "root"
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "run", "benchmarks", "--profile", "smoke", "--root", str(root),
                           "-p", f"run_settings={value}"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT / "lib"),
                               "RCSTUDY_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and len(proc.stderr) < 400, proc.stderr
    assert "not valid YAML" in proc.stderr
    assert not root.exists() and not (tmp_path / "PWNED").exists()


WARNING_CHAPTER = CHAPTER.replace('print("NOTE=" + json.dumps(note))',
                                  'from rcstudy.cache import tell_user\ntell_user("cache entry X is unreadable: recomputing")')


def test_a_cache_warning_in_a_kernel_reaches_the_runner_terminal(tmp_path, monkeypatch, capsys, chapter_folder):
    """The rendered page drops a kernel's stderr; the runner prints what the cache said."""
    chapter_folder("echo", WARNING_CHAPTER)
    monkeypatch.setattr(run, "toc_chapters", lambda: ["echo"])
    monkeypatch.setattr(run, "chapter_dependencies", lambda chapter: {})
    [result] = run.run_chapters(["echo"], "smoke", {}, root=tmp_path / "root")
    assert result.ok, result.message
    assert "⚠ cache entry X is unreadable: recomputing" in capsys.readouterr().err
