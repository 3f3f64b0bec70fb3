"""The book's chapters: which there are and in what order, each one's configuration, the models it
names and its replica run.

Chapters register themselves, so shared code never names one: a paper's experiments module
(``rcstudy.experiments.<chapter>``) declares ``Config`` and, where some of its model names are
not Hub ids (models trained from scratch), ``LOCAL_MODELS``; the other pages' configurations are
in :mod:`rcstudy.pages`; a chapter's profiles are ``chapters/params/<chapter>.<profile>.yaml`` and
its replica run ``chapters/params/<chapter>.replica.yaml``. The book's order is ``_toc.yml``'s.
"""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from types import ModuleType

import yaml

from . import pages
from .config import ChapterConfig, as_dict, nest, read_yaml
from .errors import ConfigError
from .models.registry import OFFLINE_MODELS, TINY_MODELS, model_references
from .settings import PROJECT_ROOT, chapters_dir

EXPERIMENTS = f"{__package__}.experiments"


def toc_chapters(toc_path: Path = PROJECT_ROOT / "_toc.yml") -> list[str]:
    """Chapter names in book order, read from ``_toc.yml`` (entries ``book/<name>``)."""
    toc = yaml.safe_load(toc_path.read_text())
    files = [toc["root"]]
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        files += [entry["file"] for entry in part.get("chapters", [])]
    return [Path(f).name for f in files]


def experiments_module(chapter: str) -> ModuleType | None:
    """A paper chapter's experiments module (None for a page that has none)."""
    try:
        return importlib.import_module(f"{EXPERIMENTS}.{chapter}")
    except ModuleNotFoundError as e:
        if e.name != f"{EXPERIMENTS}.{chapter}":
            raise
        return None


def config_class(chapter: str) -> type[ChapterConfig] | None:
    """A chapter's ``Config``: in its experiments module for a paper, :mod:`rcstudy.pages` for the
    book's other pages; None for a page that declares none."""
    if chapter in pages.CONFIGS:
        return pages.CONFIGS[chapter]
    cls = getattr(experiments_module(chapter), "Config", None)
    return cls if isinstance(cls, type) and issubclass(cls, ChapterConfig) else None


# --- models ----------------------------------------------------------------------------------

def profile_config(chapter: str, profile: str) -> ChapterConfig | None:
    """A chapter's configuration in a profile (None: the chapter has none, or no such profile)."""
    cls = config_class(chapter)
    try:
        return None if cls is None else cls.load(profile)
    except ConfigError:
        return None


def local_models() -> set[str]:
    """Model names that are not Hub ids: offline, tiny, and every chapter's ``LOCAL_MODELS``."""
    names = {*OFFLINE_MODELS, *TINY_MODELS}
    for chapter in toc_chapters():
        names.update(getattr(experiments_module(chapter), "LOCAL_MODELS", ()))
    return names


def hub_models(cfg: ChapterConfig) -> list[str]:
    """The Hub ids a configuration names, models and tokenizers alike (every field typed
    :data:`~rcstudy.models.registry.ModelName`) that are neither offline, tiny, nor trained from scratch."""
    local = local_models()
    return [name for name in model_references(cfg) if name not in local]


# --- the replica run of a chapter's full profile ---------------------------------------------------

#: Offline models of the full profile and their tiny random twins (same architecture and tokenizer):
#: SmolLM2-135M is real weights, and generating with it would take most of a replica run.
OFFLINE_REPLICAS = {"smollm2-135m": "tiny-llama"}


def replica_path(chapter: str) -> Path:
    return chapters_dir() / "params" / f"{chapter}.replica.yaml"


def replica_chapters() -> list[str]:
    """The chapters, in book order, that declare a replica run."""
    return [c for c in toc_chapters() if replica_path(c).is_file()]


def replica_sizes(chapter: str) -> dict:
    """What ``chapter``'s replica run changes in its full profile (sizes only), nested."""
    path = replica_path(chapter)
    if not path.is_file():
        raise ConfigError(f"no replica run for chapter {chapter!r} ({path}); chapters: {', '.join(replica_chapters())}")
    return nest(read_yaml(path))


def replica_overrides(chapter: str) -> dict:
    """The overrides that turn ``chapter``'s full profile into its replica run: :func:`replica_sizes`,
    and every offline model it names replaced by its twin (:data:`OFFLINE_REPLICAS`)."""
    overrides = copy.deepcopy(replica_sizes(chapter))  # callers may merge into its sections

    def walk(values: dict, prefix: str = "") -> None:
        for key, value in values.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            elif isinstance(value, str) and value in OFFLINE_REPLICAS:
                overrides[prefix + key] = OFFLINE_REPLICAS[value]
            elif isinstance(value, list) and set(value) & set(OFFLINE_REPLICAS):
                overrides[prefix + key] = [OFFLINE_REPLICAS.get(v, v) for v in value]

    walk(as_dict(config_class(chapter).load("full")))
    return overrides


def full_profile_hub_models(chapter: str) -> list[str]:
    """The Hub ids ``chapter``'s full profile names (each needs a replica)."""
    return hub_models(config_class(chapter).load("full", replica_overrides(chapter)))
