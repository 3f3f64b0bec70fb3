"""Typed files for cached results and trained weights: reading one never runs code.

A value is described by a JSON document (its structure) plus the arrays it holds, kept in one
of two containers:

* results (:func:`dumps` / :func:`loads`): a zip archive with the document as ``structure.json``
  and one ``<n>.npy`` member per array, written and read by NumPy without pickle (the members have
  fixed timestamps, so the same value always gives the same bytes);
* weights (:func:`dumps_tensors` / :func:`loads_tensors`): a safetensors file whose metadata
  holds the document, for state dicts, optimiser states and their bookkeeping.

Supported values: ``None``, ``bool``, ``int``, ``float`` (``nan`` and infinities included),
``str``; ``list``, ``tuple``, ``set`` and ``frozenset`` (each kept as itself); ``dict`` with any keys
that are themselves supported and hashable (string keys are stored as JSON keys, others
explicitly); NumPy arrays and scalars with their dtype (object arrays refused); torch tensors
in the weights container only; and dataclasses defined in the ``rcstudy`` package, stored as
the class's dotted name and its fields (attributes whose name starts with ``_``, such as
memoised values, are not stored). Exact types are required: a subclass of ``int``, ``dict`` or
``ndarray`` is refused, as is anything else, with a :class:`TypeError` naming the entry, the
type and where in the value it sits, when the value is written.

Reading looks a dataclass up only inside ``rcstudy`` modules (importing the module if needed),
requires that the name denote a dataclass defined there, and builds it with its fields; it calls
nothing else. Any file that does not decode to exactly such a value (truncated, corrupt, written
by something else, naming a class outside ``rcstudy``, an array of another dtype or shape than
its description) raises :class:`DecodeError`.

Every file carries a SHA-256 checksum of its content (the zip's comment; a metadata field of the
safetensors file), computed when it is written over the document, every array and a *binding*:
the file's name when written to or read from a path (a cache entry's name is the fingerprint of
its key), so an entry that was altered after it was written, or copied in under another key, no
longer matches and is refused (:class:`DecodeError`), as is a file without one. Reading is
bounded: a path is opened only if it is a regular file (a named pipe or a device is refused
without blocking or reading it, :func:`open_regular`), a zip member may declare at most
:data:`MAX_EXPANSION` times its compressed size and is read with a bounded reader, and the JSON
document, the safetensors header and the whole file have size limits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import importlib
import io
import json
import math
import os
import stat
import sys
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable

import numpy as np

#: Written into every document; a document without it is not an entry of this library.
FORMAT = "rcstudy-typed/1"
PACKAGE = "rcstudy"
_STRUCTURE = "structure.json"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
#: Where the content checksum is kept: the zip's comment (after this prefix), a safetensors metadata key.
_ZIP_CHECKSUM = b"rcstudy-sha256:"
_TENSORS_CHECKSUM = "rcstudy-sha256"

#: A zip member may declare an uncompressed size of at most this many times its compressed size
#: (plus :data:`EXPANSION_SLACK`): this library writes its members uncompressed, so anything more
#: is a foreign file, and one built to expand (1 MB that inflates to 1 GiB) is refused unread.
MAX_EXPANSION = 16
EXPANSION_SLACK = 1 << 16
#: The largest file read as an entry, the largest uncompressed content of a zip entry, the largest
#: JSON document (an entry's structure, a safetensors header).
MAX_FILE_BYTES = 1 << 36
MAX_CONTENT_BYTES = 1 << 36
MAX_JSON_BYTES = 1 << 29
MAX_TENSORS_HEADER_BYTES = 100_000_000  # safetensors' own limit


class DecodeError(ValueError):
    """A file that is not a readable entry: corrupt, truncated, foreign or naming a forbidden type."""


def _type_name(obj: Any) -> str:
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _descr(dtype: np.dtype):
    """A JSON-comparable description of a dtype (structured ones included)."""
    return json.loads(json.dumps(np.lib.format.dtype_to_descr(dtype)))


def _in_package(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _torch():
    return sys.modules.get("torch")


# --- encoding -------------------------------------------------------------------------------

class _Encoder:
    def __init__(self, entry: str, tensors: bool):
        self.entry, self.tensors = entry, tensors
        self.arrays: dict[str, Any] = {}
        self._open: set[int] = set()  # containers being encoded (a cycle is refused)

    def refuse(self, obj: Any, where: str, why: str = "") -> None:
        raise TypeError(f"cache entry {self.entry!r} cannot store a {_type_name(obj)} at {where}"
                        + (f": {why}" if why else "") + " (supported: None, bool, int, float, str, list, tuple, "
                        "set, frozenset, dict, numpy arrays and scalars, dataclasses of the rcstudy package"
                        + (", torch tensors" if self.tensors else "") + ")")

    def add(self, array: Any) -> str:
        ref = str(len(self.arrays))
        self.arrays[ref] = array
        return ref

    def encode(self, obj: Any, where: str) -> Any:
        t = type(obj)
        if obj is None or t is bool or t is int or t is str:
            return obj
        if t is float:
            return obj if math.isfinite(obj) else {"t": "float", "v": repr(obj)}
        if t is np.ndarray:
            if obj.dtype.hasobject:
                self.refuse(obj, where, f"dtype {obj.dtype} holds Python objects")
            return {"t": "ndarray", "ref": self.add(self._array(obj, where)), "dtype": _descr(obj.dtype),
                    "shape": list(obj.shape)}
        if isinstance(obj, np.generic):
            if obj.dtype.hasobject:
                self.refuse(obj, where, "an object scalar")
            return {"t": "npscalar", "ref": self.add(self._array(np.asarray(obj), where)), "dtype": _descr(obj.dtype)}
        torch = _torch()
        if torch is not None and isinstance(obj, torch.Tensor):
            if not self.tensors:
                self.refuse(obj, where, "store tensors as numpy arrays (.cpu().numpy())")
            if t not in (torch.Tensor, torch.nn.Parameter):
                self.refuse(obj, where)
            value = obj.detach().to("cpu", copy=True).contiguous()  # its own storage (safetensors refuses shared ones)
            return {"t": "tensor", "ref": self.add(value), "dtype": str(value.dtype).removeprefix("torch."),
                    "shape": list(value.shape)}
        if t in (list, tuple, set, frozenset, dict) or (dataclasses.is_dataclass(obj) and not isinstance(obj, type)):
            if id(obj) in self._open:
                self.refuse(obj, where, "the value contains itself")
            self._open.add(id(obj))
            try:
                return self._container(obj, t, where)
            finally:
                self._open.discard(id(obj))
        self.refuse(obj, where)

    def _array(self, arr: np.ndarray, where: str):
        if not self.tensors:
            return arr
        import torch

        try:
            return torch.from_numpy(np.array(arr, order="C", copy=True))  # 0-d stays 0-d
        except TypeError as e:
            self.refuse(arr, where, f"dtype {arr.dtype} has no tensor equivalent ({e})")

    def _container(self, obj: Any, t: type, where: str) -> dict:
        if t in (list, tuple):
            return {"t": t.__name__, "v": [self.encode(x, f"{where}[{i}]") for i, x in enumerate(obj)]}
        if t in (set, frozenset):
            items = [self.encode(x, f"{where}{{...}}") for x in obj]
            return {"t": t.__name__, "v": sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
        if t is dict:
            if all(type(k) is str for k in obj):
                return {"t": "dict", "v": {k: self.encode(v, f"{where}[{k!r}]") for k, v in obj.items()}}
            return {"t": "dict", "items": [[self.encode(k, f"{where} key {k!r}"), self.encode(v, f"{where}[{k!r}]")]
                                           for k, v in obj.items()]}
        return self._dataclass(obj, where)

    def _dataclass(self, obj: Any, where: str) -> dict:
        cls = type(obj)
        name = f"{cls.__module__}:{cls.__qualname__}"
        if not _in_package(cls.__module__):
            self.refuse(obj, where, f"only dataclasses of the {PACKAGE} package can be stored")
        try:
            found = lookup_dataclass(name)
        except DecodeError as e:
            self.refuse(obj, where, f"it could not be found again by name ({e})")
        if found is not cls:
            self.refuse(obj, where, f"{name} names another class")
        names = [f.name for f in dataclasses.fields(obj)]
        extra = sorted(k for k in getattr(obj, "__dict__", {}) if k not in names and not k.startswith("_"))
        if extra:
            self.refuse(obj, where, f"attributes {extra} are not fields")
        return {"t": "dataclass", "cls": name,
                "fields": {n: self.encode(getattr(obj, n), f"{where}.{n}") for n in names}}


def encode(value: Any, entry: str = "value", *, tensors: bool = False) -> tuple[dict, dict[str, Any]]:
    """The document describing ``value`` and the arrays (or tensors) it refers to by name."""
    enc = _Encoder(entry, tensors)
    return {"format": FORMAT, "value": enc.encode(value, "the value")}, enc.arrays


# --- decoding -------------------------------------------------------------------------------

def lookup_dataclass(name: str) -> type:
    """The dataclass ``module:qualname`` defined in a module of the ``rcstudy`` package; nothing
    outside the package is ever imported, and nothing but a dataclass is returned."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise DecodeError(f"malformed class name {name!r}")
    module, qualname = name.split(":")
    parts = module.split(".") + qualname.split(".")
    if not _in_package(module) or not all(p.isidentifier() and not p.startswith("__") for p in parts):
        raise DecodeError(f"class {name!r} is not a class of the {PACKAGE} package")
    try:
        obj = importlib.import_module(module)
    except ImportError as e:
        raise DecodeError(f"no module {module!r}: {e}") from None
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if not isinstance(obj, type):
            raise DecodeError(f"{name!r} is not a class")
    if not dataclasses.is_dataclass(obj) or obj.__module__ != module or obj.__qualname__ != qualname:
        raise DecodeError(f"{name!r} is not a dataclass defined in {module}")
    return obj


class _Decoder:
    def __init__(self, get: Callable[[str], Any], tensors: bool):
        self.get, self.tensors = get, tensors

    def array(self, node: dict, shape=None) -> np.ndarray:
        arr = self.get(node["ref"])
        if self.tensors:
            arr = arr.numpy()
        if type(arr) is not np.ndarray or _descr(arr.dtype) != node["dtype"] or (
                shape is not None and list(arr.shape) != shape):
            raise DecodeError(f"array {node['ref']} does not match its description {node}")
        return arr

    def decode(self, node: Any) -> Any:
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is not dict or type(node.get("t")) is not str:
            raise DecodeError(f"unexpected node {str(node)[:80]}")
        kind = node["t"]
        if kind == "float" and node.get("v") in ("nan", "inf", "-inf"):
            return float(node["v"])
        if kind in ("list", "tuple", "set", "frozenset"):
            items = node["v"]
            if type(items) is not list:
                raise DecodeError(f"{kind} without items")
            values = [self.decode(x) for x in items]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](values)
        if kind == "dict":
            if "v" in node and type(node["v"]) is dict:
                return {k: self.decode(v) for k, v in node["v"].items()}
            if "items" in node and type(node["items"]) is list:
                out = {}
                for pair in node["items"]:
                    if type(pair) is not list or len(pair) != 2:
                        raise DecodeError("malformed dict item")
                    out[self.decode(pair[0])] = self.decode(pair[1])  # an unhashable key raises TypeError
                return out
            raise DecodeError("malformed dict")
        if kind == "ndarray":
            return self.array(node, node["shape"])
        if kind == "npscalar":
            return self.array(node, [])[()]
        if kind == "tensor" and self.tensors:
            value = self.get(node["ref"])
            if str(value.dtype).removeprefix("torch.") != node["dtype"] or list(value.shape) != node["shape"]:
                raise DecodeError(f"tensor {node['ref']} does not match its description {node}")
            return value
        if kind == "dataclass":
            cls = lookup_dataclass(node["cls"])
            fields = node["fields"]
            declared = dataclasses.fields(cls)
            if type(fields) is not dict or set(fields) != {f.name for f in declared}:
                raise DecodeError(f"the fields of {node['cls']} do not match the stored ones")
            values = {f.name: self.decode(fields[f.name]) for f in declared}
            obj = cls(**{f.name: values[f.name] for f in declared if f.init})
            for f in declared:
                if not f.init:
                    object.__setattr__(obj, f.name, values[f.name])
            return obj
        raise DecodeError(f"unknown node kind {kind!r}")


def decode(doc: Any, get: Callable[[str], Any], *, tensors: bool = False) -> Any:
    """The value a document describes, with ``get(ref)`` returning the arrays it refers to."""
    if type(doc) is not dict or doc.get("format") != FORMAT or "value" not in doc:
        raise DecodeError(f"not a {FORMAT} document")
    try:
        return _Decoder(get, tensors).decode(doc["value"])
    except DecodeError:
        raise
    except Exception as e:  # a missing key, an unhashable key, a constructor refusing its fields, ...
        raise DecodeError(f"{type(e).__name__}: {e}") from None


# --- files, bounds and checksums ---------------------------------------------------------

def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return kind
    return f"file type {stat.S_IFMT(mode):o}"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file (links followed): anything else (a named
    pipe, a device, a socket, a directory) raises :class:`DecodeError` without being read, and a
    named pipe never blocks the open (it is checked before, and opened non-blocking, then checked
    again on the open file, so a file swapped in between is caught too)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise DecodeError(f"not a regular file ({_file_kind(st.st_mode)})")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DecodeError(f"not a regular file ({_file_kind(st.st_mode)})")
        if st.st_size > MAX_FILE_BYTES:
            raise DecodeError(f"{st.st_size} bytes, more than the {MAX_FILE_BYTES} an entry may have")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_regular(path: Path) -> bytes:
    with open_regular(path) as f:
        return f.read(os.fstat(f.fileno()).st_size)


def _field(h, data: bytes) -> None:
    h.update(len(data).to_bytes(8, "little"))
    h.update(data)


def zip_checksum(members: Iterable[tuple[str, bytes]], binding: str = "") -> str:
    """The checksum of a results file: SHA-256 over the binding and each member's name and the
    SHA-256 of its bytes, in order (``members``: ``(name, sha256 digest)`` pairs)."""
    h = hashlib.sha256(b"rcstudy-entry\0")
    _field(h, binding.encode())
    for name, digest in members:
        _field(h, name.encode())
        _field(h, digest)
    return h.hexdigest()


def _tensor_bytes(tensor):
    """A tensor's bytes (CPU, contiguous) as a NumPy ``uint8`` view, without a copy."""
    import torch

    return tensor.detach().reshape(-1).view(torch.uint8).numpy()


def tensors_checksum(document: str, tensors: dict, binding: str = "") -> str:
    """The checksum of a weights file: SHA-256 over the binding, the document and every tensor's
    name, dtype, shape and bytes (by name)."""
    h = hashlib.sha256(b"rcstudy-weights\0")
    _field(h, binding.encode())
    _field(h, document.encode())
    for name in sorted(tensors):
        t = tensors[name]
        _field(h, name.encode())
        _field(h, f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}".encode())
        _field(h, hashlib.sha256(_tensor_bytes(t)).digest())
    return h.hexdigest()


def _stored_zip_checksum(comment: bytes) -> str:
    if not comment.startswith(_ZIP_CHECKSUM):
        raise DecodeError("no content checksum (written by an older version or by something else)")
    return comment[len(_ZIP_CHECKSUM):].decode("ascii", "replace")


def _checked(expected: str, actual: str) -> None:
    if not hmac.compare_digest(expected.encode(), actual.encode()):
        raise DecodeError("content checksum mismatch: altered after it was written, or another key's entry")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than its declared size (the CRC is checked at its end)."""
    with zf.open(info) as src:
        data = src.read(info.file_size + 1)
        if src.read(1):
            raise DecodeError(f"member {info.filename!r} is longer than it declares")
    if len(data) != info.file_size:
        raise DecodeError(f"member {info.filename!r} holds {len(data)} bytes, not the {info.file_size} it declares")
    return data


def _check_bounds(zf: zipfile.ZipFile) -> None:
    """Refuse, before anything is read, a zip whose members declare more than the bounds allow."""
    infos = zf.infolist()
    if len({i.filename for i in infos}) != len(infos):
        raise DecodeError("duplicate member names")
    total = 0
    for info in infos:
        if info.file_size > info.compress_size * MAX_EXPANSION + EXPANSION_SLACK:
            raise DecodeError(f"member {info.filename!r} declares {info.file_size} bytes from {info.compress_size} "
                              f"compressed (more than {MAX_EXPANSION}x): refused unread")
        total += info.file_size
    if total > MAX_CONTENT_BYTES:
        raise DecodeError(f"members declare {total} bytes, more than the {MAX_CONTENT_BYTES} an entry may hold")
    structure = zf.getinfo(_STRUCTURE)
    if structure.file_size > MAX_JSON_BYTES:
        raise DecodeError(f"{_STRUCTURE} declares {structure.file_size} bytes, more than {MAX_JSON_BYTES}")


class _Hashing(io.RawIOBase):
    """A writable stream that passes everything to ``target`` and hashes it on the way."""

    def __init__(self, target):
        self.target, self.hash = target, hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.hash.update(b)
        return self.target.write(b)


# --- containers -----------------------------------------------------------------------------

def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_STORED
    return info


def dumps(value: Any, entry: str = "value", *, binding: str = "") -> bytes:
    """``value`` as a zip of NumPy arrays and a JSON document, sealed with its checksum (bound to
    ``binding``: the name of the file it goes to); :class:`TypeError` if it holds an unsupported type."""
    doc, arrays = encode(value, entry)
    buf = io.BytesIO()
    digests = []
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        text = json.dumps(doc, allow_nan=False, separators=(",", ":")).encode()
        zf.writestr(_member(_STRUCTURE), text)
        digests.append((_STRUCTURE, hashlib.sha256(text).digest()))
        for ref, arr in arrays.items():
            with zf.open(_member(f"{ref}.npy"), "w", force_zip64=True) as f:
                hashing = _Hashing(f)
                np.lib.format.write_array(hashing, arr, allow_pickle=False)
            digests.append((f"{ref}.npy", hashing.hash.digest()))
        zf.comment = _ZIP_CHECKSUM + zip_checksum(digests, binding).encode()
    return buf.getvalue()


def _binding(data: Any, binding: str | None) -> str:
    return binding if binding is not None else "" if isinstance(data, (bytes, bytearray)) else Path(data).name


def loads(data: bytes | Path, *, binding: str | None = None) -> Any:
    """The value :func:`dumps` wrote (bytes, or a file's path: a regular file, whose name is the
    binding unless ``binding`` is given); :class:`DecodeError` for anything else, a file whose
    checksum does not match included."""
    try:
        bound = _binding(data, binding)
        with contextlib.ExitStack() as stack:
            source = (io.BytesIO(data) if isinstance(data, (bytes, bytearray))
                      else stack.enter_context(open_regular(Path(data))))
            with zipfile.ZipFile(source) as zf:
                _check_bounds(zf)
                expected = _stored_zip_checksum(zf.comment)
                members = {info.filename: _read_member(zf, info) for info in zf.infolist()}
        _checked(expected, zip_checksum(((n, hashlib.sha256(b).digest()) for n, b in members.items()), bound))
        doc = json.loads(members[_STRUCTURE])

        def get(ref: str) -> np.ndarray:
            if type(ref) is not str or not ref.isdigit() or f"{ref}.npy" not in members:
                raise DecodeError(f"malformed or missing array reference {ref!r}")
            return np.lib.format.read_array(io.BytesIO(members.pop(f"{ref}.npy")), allow_pickle=False)  # freed once read

        return decode(doc, get)
    except DecodeError:
        raise
    except Exception as e:  # a bad zip, a truncated member, bad JSON, a pickled array, ...
        raise DecodeError(f"{type(e).__name__}: {e}") from None


def dumps_tensors(value: Any, entry: str = "weights", *, binding: str = "") -> bytes:
    """``value`` (state dicts, optimiser states, numbers, ...) as a safetensors file whose metadata
    holds the document and the checksum (bound to ``binding``, as for :func:`dumps`)."""
    from safetensors.torch import save

    doc, tensors = encode(value, entry, tensors=True)
    text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
    return save(tensors, metadata={"rcstudy": text, _TENSORS_CHECKSUM: tensors_checksum(text, tensors, binding)})


def loads_tensors(data: bytes | Path, *, binding: str | None = None) -> Any:
    """The value :func:`dumps_tensors` wrote (bytes, or a regular file's path, bound as for
    :func:`loads`), tensors on the CPU; :class:`DecodeError` for anything else."""
    try:
        from safetensors.torch import load

        bound = _binding(data, binding)
        data = bytes(data) if isinstance(data, (bytes, bytearray)) else _read_regular(Path(data))
        size = int.from_bytes(data[:8], "little")
        if len(data) < 8 or size > min(len(data) - 8, MAX_TENSORS_HEADER_BYTES):
            raise DecodeError(f"a header of {size} bytes in a file of {len(data)}")
        metadata = json.loads(data[8:8 + size])["__metadata__"]
        text, expected = metadata["rcstudy"], metadata.get(_TENSORS_CHECKSUM)
        if type(text) is not str or type(expected) is not str:
            raise DecodeError("no document or no content checksum (written by an older version or by something else)")
        tensors = load(data)
        _checked(expected, tensors_checksum(text, tensors, bound))
        doc = json.loads(text)

        def get(ref: str):
            if ref not in tensors:
                raise DecodeError(f"missing tensor {ref!r}")
            return tensors[ref]

        return decode(doc, get, tensors=True)
    except DecodeError:
        raise
    except Exception as e:  # not safetensors, no document, truncated, ...
        raise DecodeError(f"{type(e).__name__}: {e}") from None
