"""Unpacks the oneDNN wheels pip downloaded into include/ and lib/ of a directory.

The wheels are data-only: their files sit under <name>.data/data/. Of the library, which the wheel
carries three times (libdnnl.so, .so.3, .so.3.2, each a full copy), only the file named by its
soname, libdnnl.so.3, is kept.
"""

import sys
import zipfile
from pathlib import Path


def unpack(wheels: Path, target: Path) -> None:
    found = {"include": 0, "lib": 0}
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                parts = member.split("/")
                if len(parts) < 4 or not parts[0].endswith(".data") or parts[1] != "data":
                    continue
                inside = parts[2:]
                if inside[0] == "include" and inside[1] == "oneapi" and not member.endswith("/"):
                    found["include"] += 1
                elif inside == ["lib", "libdnnl.so.3"]:
                    found["lib"] += 1
                else:
                    continue
                destination = target.joinpath(*inside)
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(archive.read(member))
    if not found["include"] or not found["lib"]:
        sys.exit(f"unpack_onednn: no oneDNN headers or libdnnl.so.3 in the wheels of {wheels}")


if __name__ == "__main__":
    unpack(Path(sys.argv[1]), Path(sys.argv[2]))
