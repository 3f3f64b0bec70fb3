"""The runner records the peak resident memory of each chapter's execution (its kernel's process
tree, sampled from /proc) beside its times in book/timings.json."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from conftest import FRONT_MATTER
from rcstudy import run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ALLOCATING = FRONT_MATTER + """# Memory

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
megabytes = 0
```

```{code-cell} ipython3
import time
import numpy as np

held = np.ones(megabytes * 2**20, dtype=np.uint8)  # every page written: resident
time.sleep(1.5)
```
"""


def test_a_chapter_allocating_400_mb_peaks_400_mb_above_one_allocating_nothing(tmp_path, chapter_folder):
    chapter_folder("memory", ALLOCATING)
    root = tmp_path / "book-root"
    peaks = {}
    for mb in (0, 400):
        result = run.execute_chapter("memory", "smoke", {"megabytes": mb}, root=root, progress=False)
        assert result.ok, result.message
        peaks[mb] = result.peak_rss_gb
    assert 0.02 < peaks[0] < 1.0  # a kernel with numpy
    assert peaks[400] - peaks[0] == pytest.approx(400 / 1024, abs=0.08)
    run.record_timing(result, "smoke", root, cold=True)
    assert run.read_timings(root)["smoke"]["memory"]["peak_rss_gb"] == peaks[400]
    # a cached re-run replaces the latest peak, and the cold run's is kept beside its time
    run.record_timing(replace(result, peak_rss_gb=0.5, seconds=1.0), "smoke", root, cold=False)
    entry = run.read_timings(root)["smoke"]["memory"]
    assert entry["peak_rss_gb"] == 0.5 and entry["cold_peak_rss_gb"] == peaks[400] and entry["latest"] == 1.0


def test_the_sampler_sums_the_process_tree_and_keeps_a_spike_between_samples():
    code = "import numpy as np, time; a = np.ones({} * 2**20, dtype=np.uint8); time.sleep({})"
    with run.TreeMemory(interval=0.2) as memory:
        held = [subprocess.Popen([sys.executable, "-c", code.format(150, 1.5)]) for _ in range(2)]
        for p in held:
            p.wait()
    assert memory.peak_gb == pytest.approx(2 * 150 / 1024 + 2 * 0.03, abs=0.08)  # two interpreters with numpy
    freed = ("import numpy as np, sys, time; a = np.ones(200 * 2**20, dtype=np.uint8); del a; "
             "print('freed', flush=True); time.sleep(1)")
    with run.TreeMemory(interval=30) as memory:  # no sample of its own: one taken after the memory was freed
        spike = subprocess.Popen([sys.executable, "-c", freed], stdout=subprocess.PIPE, text=True)
        assert spike.stdout.readline().strip() == "freed"
        memory.sample()
        spike.wait()
    assert memory.peak_gb >= 200 / 1024  # the process's own peak (VmHWM), not what it holds now
    with run.TreeMemory() as idle:
        pass
    assert idle.peak_gb is None
