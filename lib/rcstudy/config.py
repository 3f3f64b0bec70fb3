"""Chapter configurations: defaults in one place, profiles as differences, every value validated.

Each chapter's experiment module declares ``Config``, a frozen dataclass of settings and nested
sections (frozen dataclasses too) whose defaults are the only defaults. A profile file
``chapters/params/<chapter>.<profile>.yaml`` holds what differs from them, nested like the
config, plus two keys about the run itself: ``profile`` and ``data`` (the data directory,
relative to the project; none: ``$RCSTUDY_DATA``, else ``data/``). Overrides (``rcstudy run -p``,
papermill parameters) are applied on top, as nested mappings or dotted names
(``encoder.epochs``). An unknown name or a value of the wrong type stops with one line naming it,
the expected type and the closest valid name, before anything runs.

Typed fields accept: ``bool``, ``int``, ``float`` (an int too; YAML 1.1 reads ``1e-5`` as text,
which is taken as a number), ``str``, ``Literal[...]``, ``X | None``, ``tuple[X, ...]`` (from a
list), ``dict[str, X]`` (merged key by key) and nested sections (merged field by field).
"""

from __future__ import annotations

import dataclasses
import keyword
import os
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping

import yaml

from .errors import closest, did_you_mean
from .settings import PROJECT_ROOT, chapters_dir

PROFILES = ("smoke", "quick", "full")
DEFAULT_PROFILE = "quick"
#: Keys of a profile file and notebook parameters that say how to run, not what to compute.
RUN_KEYS = ("profile", "data")
#: Set by the runner for its kernels: the models and data were checked before the first cell.
CHECKED_ENV = "RCSTUDY_PREFLIGHT_DONE"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class ConfigError(ValueError):
    """A parameter problem, said in one line."""


def param(default: Any = MISSING, help: str = "", *, factory: Any = MISSING):
    """A config field with a one-line description (shown by ``rcstudy params``)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("use factory= (or a tuple) for a mutable default")
    if is_dataclass(default) and not isinstance(default, type):
        factory, default = (lambda d=default: d), MISSING
    return field(default=default, default_factory=factory, metadata={"help": help})


def section(cls: type, help: str = ""):
    """A nested section whose defaults are its class's."""
    return field(default_factory=cls, metadata={"help": help})


# --- types ---------------------------------------------------------------------------------

def type_name(tp) -> str:
    """A type as a reader writes it: ``int``, ``list of int``, ``int or none``, ``one of a, b``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "none"
    if origin is Literal:
        return "one of " + ", ".join(map(str, args))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in args)
    if origin in (tuple, list):
        return f"list of {type_name(args[0])}" if args else "list"
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return f"mapping of {type_name(args[1])}" if args else "mapping"
    if is_dataclass(tp):
        return "section"
    return getattr(tp, "__name__", str(tp))


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def coerce(value: Any, tp, where: str) -> Any:
    """``value`` checked against (and converted to) type ``tp``; :class:`ConfigError` otherwise.

    Text where another type belongs is read as YAML once (papermill's ``-p seeds '[3]'`` passes
    the text ``[3]``); it is never evaluated as code."""
    try:
        return _coerce(value, tp, where)
    except ConfigError:
        if not isinstance(value, str):
            raise
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigError(f"parameter {where!r} expects {type_name(tp)}, got {value!r} (not valid YAML)") from None
        if isinstance(parsed, str):
            raise
        return _coerce(parsed, tp, where)


def _coerce(value: Any, tp, where: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)

    def wrong():
        return ConfigError(f"parameter {where!r} expects {type_name(tp)}, got {value!r}")

    if tp is Any:
        return value
    if tp is type(None):
        if value is None:
            return None
        raise wrong()
    if origin in (typing.Union, types.UnionType):
        for a in sorted(args, key=lambda a: a is not type(None)):  # none first: cheap and exact
            try:
                return _coerce(value, a, where)
            except ConfigError:
                pass
        raise wrong()
    if origin is Literal:
        if value in args:
            return value
        raise ConfigError(f"parameter {where!r} expects one of {', '.join(map(str, args))}, got {value!r}"
                          + did_you_mean(closest(value, args)))
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise wrong()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise wrong()
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise wrong()
    if tp is str:
        if isinstance(value, str):
            return value
        raise wrong()
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise wrong()
        item = args[0] if args else Any
        return tuple(coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise wrong()
        kt, vt = args if args else (Any, Any)
        return {coerce(k, kt, where): coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise wrong()
        return build(tp, value, where)
    raise TypeError(f"{where}: config fields of type {tp!r} are not supported")


def build(cls: type, values: Mapping[str, Any], where: str = "") -> Any:
    """An instance of the dataclass ``cls`` from a (partial) mapping; missing fields keep defaults."""
    hints = _hints(cls)
    known = [f.name for f in fields(cls)]
    kwargs = {}
    for name, value in values.items():
        if name not in known:
            raise unknown_name(f"{where}.{name}" if where else name, cls, where)
        kwargs[name] = coerce(value, hints[name], f"{where}.{name}" if where else name)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:  # __post_init__ checks and missing required fields
        raise ConfigError(f"{where or cls.__name__}: {e}") from None


def dotted_names(cls: type, prefix: str = "") -> list[str]:
    """Every settable name of a config class, sections and their fields alike (``encoder.epochs``)."""
    hints = _hints(cls)
    out = []
    for f in fields(cls):
        name = prefix + f.name
        out.append(name)
        if is_dataclass(hints[f.name]):
            out += dotted_names(hints[f.name], name + ".")
    return out


def unknown_name(name: str, cls: type, where: str = "") -> ConfigError:
    """The error for a name the config does not have, with the closest valid one."""
    root = getattr(cls, "chapter", None)
    candidates = dotted_names(cls, f"{where}." if where else "")
    last = name.rsplit(".", 1)[-1]
    # else a right field name in the wrong section: suggest where it lives
    match = closest(name, candidates, cutoff=0.5) or next((c for c in candidates if c.rsplit(".", 1)[-1] == last), None)
    owner = f"{root}: " if root else ""
    return ConfigError(f"{owner}unknown parameter {name!r}" + (did_you_mean(match) if match else
                                                             f"; see `rcstudy params {root}`" if root else ""))


# --- nesting and merging ---------------------------------------------------------------------

def check_name(key: Any) -> str:
    """A parameter name is letters, digits and ``_``, dotted for sections, and never a keyword:
    text that is anything else (``import os; ...``) is refused here, before it can go anywhere."""
    if not isinstance(key, str) or not NAME.fullmatch(key) or any(keyword.iskeyword(p) for p in key.split(".")):
        raise ConfigError(f"parameter name {key!r} is not a name (letters, digits and _, dotted for sections)")
    return key


def nest(flat: Mapping[str, Any]) -> dict:
    """``{"encoder.epochs": 2, "seeds": [1]}`` → ``{"encoder": {"epochs": 2}, "seeds": [1]}``."""
    out: dict = {}
    for key, value in flat.items():
        *parents, last = check_name(key).split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"parameter {key!r} sets a field of {p!r}, which is given a value too")
        node[last] = merge(node[last], value) if isinstance(node.get(last), Mapping) and isinstance(value, Mapping) else value
    return out


def merge(base: Mapping, update: Mapping) -> dict:
    """``update`` over ``base``, mappings merged key by key, anything else replaced."""
    out = dict(base)
    for k, v in update.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), Mapping) and isinstance(v, Mapping) else v
    return out


def as_dict(cfg: Any) -> dict:
    """A config as plain nested dicts and lists (YAML- and JSON-ready)."""
    def plain(v):
        if is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in fields(v)}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, Mapping):
            return {k: plain(x) for k, x in v.items()}
        return v
    return plain(cfg)


def difference(cfg: Any, base: Any) -> dict:
    """The fields of ``cfg`` that differ from ``base``, nested (what a profile file holds)."""
    out = {}
    for f in fields(cfg):
        a, b = getattr(cfg, f.name), getattr(base, f.name)
        if is_dataclass(a):
            sub = difference(a, b)
            if sub:
                out[f.name] = sub
        elif a != b:
            out[f.name] = as_dict(a) if not isinstance(a, (tuple, list)) else as_dict(list(a))
    return out


# --- chapters ------------------------------------------------------------------------------

def profile_path(chapter: str, profile: str, params_dir: Path | None = None) -> Path:
    return (params_dir or chapters_dir() / "params") / f"{chapter}.{profile}.yaml"


def read_profile(chapter: str, profile: str, params_dir: Path | None = None) -> dict:
    """A chapter's profile file: the run keys and the nested differences from the defaults."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}" + did_you_mean(closest(profile, PROFILES))
                          + f"; choose one of {', '.join(PROFILES)}")
    path = profile_path(chapter, profile, params_dir)
    if not path.is_file():
        raise ConfigError(f"chapter {chapter!r} has no parameters for profile {profile!r}: {path}")
    try:
        values = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(f"{path}" + (f":{mark.line + 1}" if mark else "") + f": not valid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a mapping of parameters, got {type(values).__name__}")
    if values.get("profile", profile) != profile:
        raise ConfigError(f"{path}: says profile {values['profile']!r}, but is the {profile!r} file")
    return values


def resolve_data_dir(value: str | None) -> Path | None:
    """The data directory a run names (relative to the project), or None for the environment's."""
    if value is None:
        return None
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else PROJECT_ROOT / path


@dataclass(frozen=True)
class ChapterConfig:
    """Base of every chapter's ``Config``: how to load one for a profile and overrides."""

    chapter: ClassVar[str] = ""
    #: The datasets the chapter reads (``rcstudy.data.registry`` names): checked before a run.
    datasets: ClassVar[tuple[str, ...]] = ()

    def data_sources(self) -> dict[str, str]:
        """The data source of each dataset this configuration reads from elsewhere than the folder
        (:mod:`rcstudy.data.hub`); the others come from ``$RCSTUDY_DATA``."""
        return {}

    @classmethod
    def load(cls, profile: str = DEFAULT_PROFILE, overrides: Mapping[str, Any] | None = None, *,
             params_dir: Path | None = None):
        """Defaults, then the profile's differences, then ``overrides`` (nested or dotted names)."""
        values = {k: v for k, v in read_profile(cls.chapter, profile, params_dir).items() if k not in RUN_KEYS}
        values = merge(values, nest(overrides or {}))
        return build(cls, merge(as_dict(cls()), values))

    @classmethod
    def from_notebook(cls, namespace: Mapping[str, Any]):
        """The config of a running chapter notebook, from the parameters cell's names.

        Call it in the cell right after the parameters (before other imports): every name
        defined there by then is a parameter (papermill injects unknown ones too), so an unknown
        name is caught here. Parameters left at ``None`` keep the profile's value. ``data``
        sets the data directory for this kernel.
        """
        # Parameters are data (what papermill can inject); imported names (modules, classes,
        # functions, typing forms such as the parameters cell's Optional) are not.
        ipython = {"In", "Out"}
        given = {k: v for k, v in namespace.items()
                 if not k.startswith("_") and k not in ipython
                 and isinstance(v, (str, int, float, bool, type(None), list, tuple, dict))}
        for name in given:
            if name not in RUN_KEYS and name not in {f.name for f in fields(cls)}:
                raise unknown_name(name, cls)
        data = resolve_data_dir(given.get("data"))
        if data is not None:
            os.environ["RCSTUDY_DATA"] = str(data)
        overrides = {k: v for k, v in given.items() if k not in RUN_KEYS and v is not None}
        profile = given.get("profile", DEFAULT_PROFILE)
        cfg = cls.load(profile, overrides)
        if os.environ.get(CHECKED_ENV) != "1":  # plain papermill or Jupyter: the runner's checks, here
            from .preflight import chapter_problems

            offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false")
            problems = chapter_problems(cls, cfg, online=not offline)
            if problems:
                hint = ("" if profile == "smoke" else
                        ' (to try the chapter on the bundled test fixtures, set profile = "smoke" in the parameters cell)')
                raise ConfigError("; ".join(problems) + hint)
        return cfg

    @classmethod
    def describe(cls, profile: str | None = None) -> list[dict]:
        """One row per parameter: name, type, default (or the profile's value), description."""
        cfg = cls.load(profile) if profile else cls()
        rows = []

        def walk(klass, obj, prefix):
            hints = _hints(klass)
            for f in fields(klass):
                value = getattr(obj, f.name)
                tp = hints[f.name]
                rows.append({"name": prefix + f.name, "type": type_name(tp),
                             "value": "" if is_dataclass(tp) else as_dict(value),
                             "description": f.metadata.get("help", "")})
                if is_dataclass(tp):
                    walk(tp, value, prefix + f.name + ".")
        walk(cls, cfg, "")
        return rows


def config_class(chapter: str) -> type[ChapterConfig] | None:
    """A chapter's ``Config``: in ``rcstudy.experiments.<chapter>`` for a paper, ``rcstudy.pages``
    for the book's other pages; None for a page that declares none."""
    import importlib

    from . import pages

    if chapter in pages.CONFIGS:
        return pages.CONFIGS[chapter]
    try:
        module = importlib.import_module(f"{__package__}.experiments.{chapter}")
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.experiments.{chapter}":
            raise
        return None
    cls = getattr(module, "Config", None)
    return cls if isinstance(cls, type) and issubclass(cls, ChapterConfig) else None


def replace(cfg: Any, **changes) -> Any:
    """``dataclasses.replace`` that also takes dotted names (``replace(cfg, **{"encoder.lr": 1e-4})``)."""
    nested = nest(changes)
    return build(type(cfg), merge(as_dict(cfg), nested))


