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
list), ``dict[str, X]`` (merged key by key) and nested sections (merged field by field). The
schema is closed: there is no ``Any``, so every value that reaches a notebook is a plain literal
(text, a number, a truth value, none, or lists and mappings of them) that papermill writes as a
Python literal. Numbers are finite and positive unless a field declares another range
(``param(..., ge=0)``, ``gt=0``, ``le=1``), checked for every number it holds before anything runs.

Parameters are data. YAML text (profile files, ``-p name=value``, papermill's text values) is
read by :func:`parse_yaml`: plain scalars, lists and mappings only; tags (``!!binary``,
``!!python/...``, ``!!set``), anchors and aliases are refused, and so is a value longer than
:data:`MAX_VALUE_CHARS`. An error message quotes at most :data:`SHOWN_CHARS` characters of a value.
"""

from __future__ import annotations

import keyword
import math
import os
import re
import types
import typing
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping

import yaml

from .errors import ConfigError, closest, did_you_mean
from .schema import POSITIVE, Range, param, section  # noqa: F401 (a chapter's Config declares its fields with these)
from .settings import PROJECT_ROOT, chapters_dir

PROFILES = ("smoke", "quick", "full")
DEFAULT_PROFILE = "quick"
#: Keys of a profile file and notebook parameters that say how to run, not what to compute.
RUN_KEYS = ("profile", "data")
#: Set by the runner for its kernels: the models and data were checked before the first cell.
CHECKED_ENV = "RCSTUDY_PREFLIGHT_DONE"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


#: The longest text a parameter value may be (YAML or a string), and how much of one an error quotes.
MAX_VALUE_CHARS, SHOWN_CHARS = 10_000, 80


def shown(value: Any) -> str:
    """A value as an error quotes it: its ``repr``, cut to :data:`SHOWN_CHARS` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


# --- YAML: plain data only -------------------------------------------------------------------

class _DataLoader(yaml.SafeLoader):
    """YAML's safe loader, narrowed to data a parameter can hold: no tags, anchors or aliases (an
    alias can expand a short text into gigabytes), no dates (text stays text)."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases (*name) are not allowed in a parameter value")
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            raise yaml.YAMLError("anchors (&name) are not allowed in a parameter value")
        return super().compose_node(parent, index)

    def construct_object(self, node, deep=False):
        if node.tag not in _PLAIN_TAGS:
            raise yaml.YAMLError(f"the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is not allowed "
                                 "(parameters are plain text, numbers, true/false, null, lists and mappings)")
        return super().construct_object(node, deep)


_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "seq", "map")}


def parse_yaml(text: str, where: str, *, file: bool = False) -> Any:
    """``text`` read as plain YAML data (:class:`_DataLoader`); :class:`ConfigError` naming ``where``
    (a parameter, or with ``file`` a file and the line) otherwise. A text over
    :data:`MAX_VALUE_CHARS` is refused before it is parsed."""
    if len(text) > MAX_VALUE_CHARS and not file:
        raise ConfigError(f"{where}: the value is {len(text):,} characters long (at most {MAX_VALUE_CHARS:,})")
    try:
        return yaml.load(text, Loader=_DataLoader)  # noqa: S506 (a narrowed SafeLoader)
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e)
        if file:
            mark = getattr(e, "problem_mark", None)
            raise ConfigError(f"{where}" + (f":{mark.line + 1}" if mark else "") + f": not valid YAML ({problem})") from None
        raise ConfigError(f"{where}: {shown(text)} is not valid YAML ({problem})") from None


def read_yaml(path: Path) -> Any:
    """A YAML file of parameters (a profile, a replica run), read as :func:`parse_yaml` reads text."""
    return parse_yaml(Path(path).read_text(), str(path), file=True)


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
            parsed = parse_yaml(value, f"parameter {where!r}")
        except ConfigError:
            raise ConfigError(f"parameter {where!r} expects {type_name(tp)}, got {shown(value)} (not valid YAML)") from None
        if isinstance(parsed, str):
            raise
        return _coerce(parsed, tp, where)


_NO = object()  # a scalar converter's answer for a value of the wrong type


def _as_none(value, where):
    return None if value is None else _NO


def _as_bool(value, where):
    return value if isinstance(value, bool) else _NO


def _as_int(value, where):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, float) and value.is_integer() else _NO


def _as_float(value, where):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return _NO


def _as_str(value, where):
    if not isinstance(value, str):
        return _NO
    if len(value) > MAX_VALUE_CHARS:
        raise ConfigError(f"parameter {where!r}: the text is {len(value):,} characters long (at most {MAX_VALUE_CHARS:,})")
    return value


_SCALARS = {type(None): _as_none, bool: _as_bool, int: _as_int, float: _as_float, str: _as_str}


def _coerce(value: Any, tp, where: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    wrong = ConfigError(f"parameter {where!r} expects {type_name(tp)}, got {shown(value)}")
    if tp in _SCALARS:
        out = _SCALARS[tp](value, where)
        if out is _NO:
            raise wrong
        return out
    if origin in (typing.Union, types.UnionType):
        for a in sorted(args, key=lambda a: a is not type(None)):  # none first: cheap and exact
            try:
                return _coerce(value, a, where)
            except ConfigError:
                pass
        raise wrong
    if origin is Literal:
        if value in args:
            return value
        raise ConfigError(f"parameter {where!r} expects one of {', '.join(map(str, args))}, got {shown(value)}"
                          + did_you_mean(closest(value, args)))
    if origin in (tuple, list) and args and isinstance(value, (list, tuple)):
        return tuple(coerce(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (dict, Mapping) and args and isinstance(value, Mapping):
        kt, vt = args
        return {coerce(k, kt, where): coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if is_dataclass(tp) and isinstance(value, (tp, Mapping)):
        return value if isinstance(value, tp) else build(tp, value, where)
    if origin in (tuple, list, dict, Mapping) and args or is_dataclass(tp):
        raise wrong
    # Any, bare list or dict, other classes: a closed schema declares what a value holds
    raise TypeError(f"{where}: config fields of type {tp!r} are not supported")


def check_range(value: Any, rng: Range, where: str) -> None:
    """Every number ``value`` holds (itself, a list's items, a mapping's values) lies in ``rng``."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        problem = rng.problem(value)
        if problem:
            raise ConfigError(f"parameter {where!r} expects {problem}, got {shown(value)}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_range(v, rng, f"{where}[{i}]")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            check_range(v, rng, f"{where}.{k}")


def build(cls: type, values: Mapping[str, Any], where: str = "") -> Any:
    """An instance of the dataclass ``cls`` from a (partial) mapping; missing fields keep defaults."""
    hints = _hints(cls)
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for name, value in values.items():
        if name not in known:
            raise unknown_name(f"{where}.{name}" if where else name, cls, where)
        dotted = f"{where}.{name}" if where else name
        kwargs[name] = coerce(value, hints[name], dotted)
        check_range(kwargs[name], known[name].metadata.get("range", POSITIVE), dotted)
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
        raise ConfigError(f"parameter name {shown(key)} is not a name (letters, digits and _, dotted for sections)")
    return key


def literal(value: Any, where: str) -> Any:
    """``value`` if it is plain data that papermill writes as a Python literal: text, a finite
    number, a truth value, None, and lists and mappings (with text keys) of them; else
    :class:`ConfigError`. What a runner injects into a notebook passes through here."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"parameter {where!r} expects a finite number, got {shown(value)}")
        return value
    if isinstance(value, (list, tuple)):
        return [literal(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {_text_key(k, where): literal(v, f"{where}.{k}") for k, v in value.items()}
    raise ConfigError(f"parameter {where!r} holds a {type(value).__name__}, which is not a parameter value "
                      "(text, numbers, true/false, null, lists and mappings)")


def _text_key(key: Any, where: str) -> str:
    if not isinstance(key, str):
        raise ConfigError(f"parameter {where!r} has a key {shown(key)} that is not text")
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
    values = read_yaml(path) or {}
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
        """The config of a running chapter notebook, from the parameters cell's names (checked like
        the runner's parameters; :func:`rcstudy.notebook.chapter_config` also checks models and data).

        Every name defined in the namespace by then is a parameter (papermill injects unknown ones
        too), so an unknown name is caught here. Parameters left at ``None`` keep the profile's
        value; ``data`` left at ``None`` is the profile's data directory (the smoke profile's
        fixtures), else ``$RCSTUDY_DATA``. ``data`` sets the data directory for this kernel.
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
        profile = coerce(given.get("profile", DEFAULT_PROFILE), Literal[PROFILES], "profile")
        data = given.get("data")
        if data is None:
            data = read_profile(cls.chapter, profile).get("data")
        data = resolve_data_dir(coerce(data, str | None, "data"))
        if data is not None:
            os.environ["RCSTUDY_DATA"] = str(data)
        overrides = {k: v for k, v in given.items() if k not in RUN_KEYS and v is not None}
        return cls.load(profile, overrides)

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


def replace(cfg: Any, **changes) -> Any:
    """``dataclasses.replace`` that also takes dotted names (``replace(cfg, **{"encoder.lr": 1e-4})``)."""
    nested = nest(changes)
    return build(type(cfg), merge(as_dict(cfg), nested))


