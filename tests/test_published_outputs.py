"""Published notebooks hold what a reader should see: no progress bars, no stderr at all.

The runner starts each kernel without capturing its file descriptors, so the library's progress
bars (written to the kernel's own stderr, ``sys.__stderr__``) reach the runner's terminal and never
the notebook; tqdm's notice that Jupyter widgets are missing is filtered; the kernel talks over IPC
and prints no transport warning. The test runs as a user's run does: without ``PYTEST_CURRENT_TEST``
in the environment, and it reads the published ``.ipynb`` itself, not the rendered page.
"""

import json
import os

import pytest

from conftest import FRONT_MATTER
from rcstudy import run

pytestmark = pytest.mark.slow

CHAPTER = FRONT_MATTER + """# Progress

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
```

```{code-cell} ipython3
import os
import sys
import time

import tqdm.auto  # what datasets and transformers import: tqdm's widget notice in a kernel

from rcstudy.runtime import track

for _ in track(range(4), desc="long demo work"):
    time.sleep(0.05)
os.write(2, b"a native library writes to descriptor 2\\n")
print("the cell's result")
```
"""


def outputs(path) -> list[dict]:
    nb = json.loads(path.read_text())
    return [o for c in nb["cells"] for o in c.get("outputs", [])]


def stderr_outputs(path) -> list[str]:
    return ["".join(o.get("text", "")) for o in outputs(path) if o.get("output_type") == "stream"
            and o.get("name") == "stderr"]


def test_a_published_notebook_holds_no_stderr_and_progress_reaches_the_terminal(tmp_path, monkeypatch, capfd,
                                                                               chapter_folder):
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    chapter_folder("progress", CHAPTER, "profile: smoke\n")
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TOKENIZERS_PARALLELISM", "RCSTUDY_PROGRESS"):
        monkeypatch.setenv(name, "")  # configure_environment sets them; monkeypatch restores them
    run.configure_environment("smoke", online=False, refresh=False)
    monkeypatch.setenv("RCSTUDY_PROGRESS", "terminal")  # the runner's setting
    capfd.readouterr()

    result = run.execute_chapter("progress", "smoke", root=tmp_path / "root", progress=False)
    assert result.ok, result.message
    terminal = capfd.readouterr().err

    published = tmp_path / "root" / "book" / "progress.ipynb"
    assert stderr_outputs(published) == []
    text = json.dumps(outputs(published))
    assert "the cell's result" in text
    assert "long demo work" not in text and "IProgress" not in text and "descriptor 2" not in text
    assert "long demo work" in terminal and "descriptor 2" in terminal  # shown to whoever runs it
    assert "without encryption" not in terminal


def test_kernels_started_at_once_keep_their_own_sockets(tmp_path, chapter_folder):
    """Two runs started together from one working directory (on two book roots) each talk to their
    own kernel, and no socket is left in the working directory."""
    import subprocess
    import sys

    folder = chapter_folder("teaching", CHAPTER, "profile: smoke\n")  # a page of the book's table of contents
    env = {**os.environ, "RCSTUDY_CHAPTERS": str(folder), "RCSTUDY_CACHE": str(tmp_path / "cache")}
    env.pop("PYTEST_CURRENT_TEST", None)
    procs = [subprocess.Popen([sys.executable, "-m", "rcstudy", "run", "teaching", "--profile", "smoke", "--root",
                               str(tmp_path / f"root{i}")], cwd=run.PROJECT_ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i in (1, 2)]
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-2000:]
    for i in (1, 2):
        assert "the cell's result" in json.dumps(outputs(tmp_path / f"root{i}" / "book" / "teaching.ipynb"))
    assert not list(run.PROJECT_ROOT.glob("kernel-ipc*"))
