"""Where things live: the data directory, the caches, the published book folder.

Every location can be overridden by an environment variable so that a user, a test or the
runner can point the library elsewhere without touching code.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

#: How long loops report progress (:func:`rcstudy.runtime.track`): "terminal" (set by the runner)
#: writes to the terminal of `rcstudy run`, never into the notebook; "off" is silent; otherwise the
#: kernel's stderr, which Jupyter shows under the cell and the book leaves out of its pages.
PROGRESS_ENV = "RCSTUDY_PROGRESS"

#: Names the book's checkout (the folder holding ``_toc.yml`` and ``chapters/``); ``rcstudy --root``
#: sets it for the commands that read a checkout.
ROOT_ENV = "RCSTUDY_ROOT"


def is_project(folder: Path) -> bool:
    """Whether ``folder`` is a checkout of the book: its ``_toc.yml`` beside its ``chapters/``."""
    return (folder / "_toc.yml").is_file() and (folder / "chapters").is_dir()


def find_project_root() -> Path:
    """The book's checkout: ``$RCSTUDY_ROOT``; else the working directory or the nearest folder above
    it that is one (:func:`is_project`); else the checkout this package is installed from in
    development mode (two levels above ``lib/rcstudy``); else the working directory, where a command
    that needs the book then says what it looked for."""
    value = os.environ.get(ROOT_ENV)
    if value:
        return Path(value).expanduser().resolve()
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        if is_project(folder):
            return folder
    source = Path(__file__).resolve().parents[2]
    return source if is_project(source) else cwd


@functools.cache
def project_root() -> Path:
    """The book's checkout (:func:`find_project_root`), found once per process, when first asked:
    the command line sets ``$RCSTUDY_ROOT`` from ``--root`` before anything asks."""
    return find_project_root()


def __getattr__(name: str):
    # ``PROJECT_ROOT`` is the checkout, found when first imported (not when this module is).
    if name == "PROJECT_ROOT":
        return project_root()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _path_from_env(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser().resolve() if value else default


def data_dir() -> Path:
    """The datasets' root folder: ``$RCSTUDY_DATA``, else ``data/`` in the project."""
    return _path_from_env("RCSTUDY_DATA", project_root() / "data")


def chapters_dir() -> Path:
    """The chapters' MyST sources and their ``params/``: ``$RCSTUDY_CHAPTERS``, else ``chapters/``."""
    return _path_from_env("RCSTUDY_CHAPTERS", project_root() / "chapters")


def cache_dir() -> Path:
    """Root of the project's on-disk caches (results, converted models)."""
    return _path_from_env("RCSTUDY_CACHE", project_root() / ".cache")


def user_cache_dir() -> Path:
    """The user's cache for this library, shared by every checkout: ``$XDG_CACHE_HOME/rcstudy``,
    else ``~/.cache/rcstudy``."""
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser().resolve() / "rcstudy"


def models_dir() -> Path:
    """Converted model copies (SmolLM2 de-quantised from GGUF): ``$RCSTUDY_MODELS``, else the user's
    cache (:func:`user_cache_dir`), so every clone and test run shares one copy."""
    return _path_from_env("RCSTUDY_MODELS", user_cache_dir() / "models")


#: A folder of architecture replicas (:mod:`rcstudy.models.replicas`): when set, every Hub id loads
#: its tiny random replica from there instead of the Hub (tests run the full profile's code this way).
REPLICAS_ENV = "RCSTUDY_REPLICAS"


def replicas_dir() -> Path | None:
    """``$RCSTUDY_REPLICAS`` (see :data:`REPLICAS_ENV`), or None: Hub ids are Hub ids."""
    value = os.environ.get(REPLICAS_ENV)
    return Path(value).expanduser().resolve() if value else None


def env_flag(name: str) -> bool:
    """Whether the environment variable ``name`` is switched on: 1, true, yes or on, in any case, as
    ``huggingface_hub`` reads its own switches (HF_HUB_OFFLINE), so that the book and the Hub agree."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def hub_offline() -> bool:
    """True when the HuggingFace Hub must not be reached (the runner sets HF_HUB_OFFLINE=1 unless
    ``--online``)."""
    return env_flag("HF_HUB_OFFLINE")


def refresh_requested() -> bool:
    """True when cached results must be recomputed (``rcstudy run --refresh``)."""
    return env_flag("RCSTUDY_REFRESH")


def book_root() -> Path:
    """The folder holding ``_config.yml``/``_toc.yml``; published notebooks go to ``<root>/book``."""
    return _path_from_env("RCSTUDY_BOOK_ROOT", project_root())


def exports_dir() -> Path:
    """Files a chapter exports for users and for later chapters (e.g. ReClor's EASY/HARD split)."""
    return _path_from_env("RCSTUDY_EXPORTS", book_root() / "book" / "exports")


def kernel_options(sockets: Path) -> dict:
    """How the runner starts a chapter's kernel (keyword arguments of ``papermill.execute_notebook``),
    its sockets in the folder ``sockets`` (one of its own for each kernel: jupyter_client numbers
    IPC sockets from 1 under a fixed name, so kernels started at once in one folder would take
    each other's; its default folder is the working directory).

    * Its own file descriptors are left alone (``capture_fd_output=False``): what the library writes
      to ``sys.__stderr__`` — the progress bars (:data:`PROGRESS_ENV` ``terminal``) — reaches the
      runner's terminal, never the notebook, while ``print`` and ``sys.stderr`` still go into it.
    * tqdm's notice that Jupyter widgets are missing (raised when a library imports ``tqdm.auto`` in
      a kernel) is not kept in the notebook: the pages show no progress bars at all.
    * It talks to the runner over local IPC sockets, not TCP: nothing listens on the network, and
      the kernel has no transport warning to print.
    """
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(Path(sockets) / "kernel")
    return {
        "extra_arguments": [
            "--IPKernelApp.capture_fd_output=False",
            '--IPKernelApp.exec_lines=import warnings; warnings.filterwarnings("ignore", "IProgress not found"); '
            "del warnings",
        ],
        "config": config,
    }
