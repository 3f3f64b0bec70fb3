"""Add the sha256 of every file pip would install to a lock file of ``name==version`` lines.

    python tools/lock_hashes.py PINS OUT

downloads each pinned distribution (no dependencies: the lock is the whole environment) from pip's
configured index into a temporary folder, hashes it, and writes ``OUT``: PINS's header comments,
then one entry per pin, ``name==version \\`` followed by its ``--hash=sha256:...`` lines, which
``pip install --no-deps --require-hashes -r OUT`` checks. The files are those of this platform and
Python (the lock's header says which); nothing is read from the Hugging Face Hub.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename


def file_pin(path: Path) -> tuple[str, str]:
    if path.suffix == ".whl":
        name, version, *_ = parse_wheel_filename(path.name)
    else:
        name, version = parse_sdist_filename(path.name)
    return canonicalize_name(name), str(version)


def main(pins_path: str, out_path: str) -> int:
    lines = Path(pins_path).read_text().splitlines()
    header = [line for line in lines if line.startswith("#")]
    pins = [line.split("#")[0].strip() for line in lines if line.strip() and not line.startswith("#")]
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp) / "pins.txt"
        requirements.write_text("\n".join(pins) + "\n")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-r", str(requirements),
                        "-d", str(Path(tmp) / "files")], check=True)
        hashes: dict[tuple[str, str], list[str]] = {}
        for f in sorted((Path(tmp) / "files").iterdir()):
            hashes.setdefault(file_pin(f), []).append(hashlib.sha256(f.read_bytes()).hexdigest())
    body = []
    for pin in pins:
        name, _, version = pin.partition("==")
        found = hashes.get((canonicalize_name(name), version.split("+")[0]))
        if not found:
            print(f"no file was downloaded for {pin}", file=sys.stderr)
            return 1
        body.append(f"{pin} \\\n" + " \\\n".join(f"    --hash=sha256:{h}" for h in found))
    Path(out_path).write_text("\n".join(header + body) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
