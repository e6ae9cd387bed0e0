"""Copy oneDNN's license and third-party notices out of its wheel.

    python packaging/notices.py ONEDNN.whl DIR

Writes DIR/onednn-LICENSE.txt and DIR/onednn-THIRD-PARTY-PROGRAMS.txt (the wheel's share/doc/onednn/).
"""

import sys
import zipfile
from pathlib import Path

NOTICES = ("LICENSE", "THIRD-PARTY-PROGRAMS")

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    wheel, out = Path(sys.argv[1]), Path(sys.argv[2])
    with zipfile.ZipFile(wheel) as archive:
        found = {n.rsplit("/", 1)[1]: n for n in archive.namelist() if "/share/doc/onednn/" in n}
        missing = [n for n in NOTICES if n not in found]
        if missing:
            sys.exit(f"notices: {wheel.name} has no share/doc/onednn/{', '.join(missing)}")
        for name in NOTICES:
            (out / f"onednn-{name}.txt").write_bytes(archive.read(found[name]))
