"""The package as pip installs it: a wheel that finds the book from the working directory or
``--root``, declares what it imports, ships ``py.typed``, answers ``--version`` at once; the hashed
lock; the optional fastText binding; where the shared caches and a smoke run's book go."""

import argparse
import ast
import os
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "rcstudy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    for sep in "[<>=~!; ":
        requirement = requirement.split(sep)[0]
    return requirement.lower().replace("_", "-")


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory):
    """The wheel pip builds from the checkout, installed (no dependencies: this environment's) into
    a folder of its own that comes first on the path, so the checkout's own copy is not what runs."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "lib", source / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"),
                    str(source)], check=True, capture_output=True)
    (wheel,) = (tmp / "dist").glob("rcstudy-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                    str(tmp / "site"), str(wheel)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RCSTUDY_")}
    env["PYTHONPATH"] = str(tmp / "site")
    env["RCSTUDY_MODELS"] = os.environ.get("RCSTUDY_MODELS", str(ROOT / ".cache" / "models"))
    (tmp / "elsewhere").mkdir()
    return wheel, tmp / "site", env, tmp / "elsewhere"


def test_the_wheel_ships_py_typed_and_no_book(installed_wheel):
    wheel, *_ = installed_wheel
    names = zipfile.ZipFile(wheel).namelist()
    assert "rcstudy/py.typed" in names and "rcstudy/cli.py" in names
    assert not [n for n in names if n.startswith(("chapters/", "tests/", "_toc.yml"))]


def test_installed_version_answers_without_importing_the_library(installed_wheel):
    _, site, env, elsewhere = installed_wheel
    probe = ("import sys, time; t = time.perf_counter(); import rcstudy.cli as c\n"
             "try:\n    c.main(['--version'])\nexcept SystemExit:\n    pass\n"
             "print(c.__file__, time.perf_counter() - t, 'torch' in sys.modules, 'rcstudy.run' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    version, (where, seconds, torch, library) = proc.stdout.split("\n")[0], proc.stdout.split("\n")[1].split()
    assert version == f"rcstudy {PYPROJECT['project']['version']}"
    assert where.startswith(str(site)) and torch == "False" and library == "False", proc.stdout
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rcstudy", "--version"], cwd=elsewhere, env=env, check=True, capture_output=True)
    assert time.perf_counter() - start < 2.0  # about 0.3 s on an idle machine; the bound leaves room for load


def test_installed_package_reads_the_book_named_by_root_or_the_working_directory(installed_wheel):
    _, site, env, elsewhere = installed_wheel
    probe = "import rcstudy.settings as s; print(s.__file__); print(s.project_root())"
    for cwd, extra in ((ROOT / "chapters", {}), (elsewhere, {"RCSTUDY_ROOT": str(ROOT)})):
        proc = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env={**env, **extra}, capture_output=True,
                              text=True, check=True)
        where, root = proc.stdout.split()
        assert where.startswith(str(site)) and Path(root) == ROOT
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "params", "reclor", "--root", str(ROOT)], cwd=elsewhere,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("reclor parameters (defaults)") and "main_models" in proc.stdout


def test_every_imported_distribution_is_declared():
    """Each third-party module the library imports (anywhere, lazily too) comes from a distribution
    pyproject.toml declares, as a dependency or in an extra."""
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extras = {_name(r) for reqs in PYPROJECT["project"]["optional-dependencies"].values() for r in reqs}
    modules = set()
    for path in LIB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    third_party = sorted(m for m in modules - set(sys.stdlib_module_names) if m != "rcstudy")
    owners = packages_distributions()
    missing = {}
    for module in third_party:
        dists = {_name(d) for d in owners.get(module, [])}
        if not dists & (declared | extras):
            missing[module] = sorted(dists)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
    assert "fasttext-community" in extras and "fasttext-community" not in declared  # optional: see below


def test_every_extra_adds_something():
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items():
        assert {_name(r) for r in reqs} - declared, f"the {extra!r} extra adds nothing to the dependencies"


def test_without_the_fasttext_binding_the_numpy_version_runs(monkeypatch):
    from rcstudy.baselines import ngram
    from rcstudy.data.records import MCItem

    monkeypatch.setitem(sys.modules, "fasttext", None)  # `import fasttext` now fails, as when it is not installed
    real_find_spec = ngram.importlib.util.find_spec
    monkeypatch.setattr(ngram.importlib.util, "find_spec",
                        lambda name, *a: None if name == "fasttext" else real_find_spec(name, *a))
    cfg = ngram.NgramConfig(fields="A", dim=8, epochs=3)
    assert ngram.default_backend() == "numpy" and cfg.backend == "numpy"
    assert isinstance(ngram.classifier(cfg), ngram.NgramClassifier)
    items = [MCItem(id=f"q{i}", context="c", question="q", options=("good cue", "bad", "bad", "bad"), label=0)
             for i in range(6)]
    scores = ngram.fit_predict_mc(items, {"val": items[:2]}, cfg)["val"]
    assert scores.shape == (2, 4)


def test_the_lock_is_hashed_and_make_env_can_install_it():
    entries, current = [], None
    for line in (ROOT / "requirements-lock.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.strip().startswith("--hash=sha256:"):
            assert current is not None and len(line.strip().removesuffix("\\").strip()) == len("--hash=sha256:") + 64
            current[1] += 1
        else:
            current = [line.split()[0], 0]
            entries.append(current)
    assert len(entries) > 100 and not [name for name, hashes in entries if hashes == 0]
    assert not [name for name, _ in entries if name.startswith(("torch==", "rcstudy"))]
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements-lock.txt" in makefile and "ifeq ($(LOCKED),1)" in makefile


def test_the_command_line_knows_the_profiles_without_importing_them():
    from rcstudy import cli, config

    assert cli.PROFILES == config.PROFILES


def test_a_smoke_run_never_publishes_over_the_book(monkeypatch):
    from rcstudy import cli
    from rcstudy.settings import project_root

    monkeypatch.delenv("RCSTUDY_BOOK_ROOT", raising=False)
    args = argparse.Namespace(root=None, profile="smoke")
    assert cli.publish_root(args) == project_root() / "_build" / "smoke"
    assert cli.publish_root(argparse.Namespace(root=Path("/elsewhere"), profile="smoke")) == Path("/elsewhere")
    assert cli.publish_root(argparse.Namespace(root=None, profile="quick")) == project_root()


def test_converted_models_are_shared_by_every_clone(monkeypatch, tmp_path):
    from rcstudy import settings

    monkeypatch.delenv("RCSTUDY_MODELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert settings.models_dir() == tmp_path.resolve() / "rcstudy" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert settings.models_dir() == Path("~/.cache/rcstudy/models").expanduser().resolve()
    assert not settings.models_dir().is_relative_to(settings.project_root())
