"""Runs the test suite as other CPUs would run it, on this one.

numpy, OpenBLAS, TensorFlow and graphrun-cc each pick kernels by the CPU's features, so a
suite that passes here can fail on a machine without AVX-512 or AVX2. Each profile turns
off what this CPU has and another may lack:

    NPY_DISABLE_CPU_FEATURES   numpy's dispatched SIMD paths (only those this CPU has)
    OPENBLAS_CORETYPE          OpenBLAS's kernels for an older core
    TF_ENABLE_ONEDNN_OPTS      TensorFlow's oneDNN kernels (1) or Eigen's (0)
    GRAPHRUN_CC_NO_AVX2        graphrun-cc's own kernels in their SSE form (runner/kernels/lib/cpu_isa.h):
                               the portable GEMM instead of the AVX2/FMA one (its fallback and the kernels
                               oneDNN does not serve), two-lane tanh, SSE max pooling
    GRAPHRUN_CC_NO_AVX512      the same kernels at most in their AVX2 form
    GRAPHRUN_CC_MAX_CPU_ISA    the newest instruction set graphrun-cc's oneDNN kernels may use (its float32
                               convolutions and products); oneDNN's own ONEDNN_MAX_CPU_ISA would cap the
                               oracle TensorFlow's too, whose float16 matmul then aborts on a CPU with
                               AVX512-FP16

    .venv/bin/python -m tests.support.cpu_profiles                  # every profile, the whole suite
    .venv/bin/python -m tests.support.cpu_profiles no-avx2 -- -x    # one profile, pytest flags after --

Exits non-zero if any profile fails; prints one line per profile.
"""

import argparse
import os
import subprocess
import sys
import time


def _dispatched(*levels):
    """The features of `levels` that numpy dispatches at run time and this CPU has."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    wanted = set()
    for level in levels:
        wanted |= {f for f in __cpu_dispatch__ if f.startswith(level)}
    return " ".join(sorted(f for f in wanted if __cpu_features__.get(f)))


# name: (what it stands for, environment)
PROFILES = {
    "no-avx512": ("an AVX2 machine (Zen 3, Haswell): no AVX-512 in numpy, OpenBLAS's Haswell kernels, "
                  "TensorFlow's Eigen kernels",
                  {"NPY_DISABLE_CPU_FEATURES": _dispatched("X86_V4", "AVX512"), "OPENBLAS_CORETYPE": "Haswell",
                   "TF_ENABLE_ONEDNN_OPTS": "0", "GRAPHRUN_CC_MAX_CPU_ISA": "AVX2", "GRAPHRUN_CC_NO_AVX512": "1"}),
    "no-avx2": ("an AVX machine (Sandy Bridge): numpy at its SSE4.2 baseline, OpenBLAS's Sandybridge kernels, "
                "TensorFlow's oneDNN kernels, graphrun-cc's portable GEMM and oneDNN's AVX kernels",
                {"NPY_DISABLE_CPU_FEATURES": _dispatched("X86_V3", "X86_V4", "AVX512"),
                 "OPENBLAS_CORETYPE": "Sandybridge", "TF_ENABLE_ONEDNN_OPTS": "1", "GRAPHRUN_CC_NO_AVX2": "1",
                 "GRAPHRUN_CC_MAX_CPU_ISA": "AVX"}),
    "sse-only": ("an SSE4.2 machine (Nehalem): numpy's baseline, OpenBLAS's Nehalem kernels, TensorFlow's Eigen "
                 "kernels, graphrun-cc's portable GEMM",
                 {"NPY_DISABLE_CPU_FEATURES": _dispatched("X86_V3", "X86_V4", "AVX512"),
                  "OPENBLAS_CORETYPE": "Nehalem", "TF_ENABLE_ONEDNN_OPTS": "0", "GRAPHRUN_CC_NO_AVX2": "1",
                  "GRAPHRUN_CC_MAX_CPU_ISA": "SSE41"}),
}


def run(name, pytest_args):
    what, env = PROFILES[name]
    env = {k: v for k, v in env.items() if v}   # an empty feature list would make numpy complain
    print(f"== profile {name}: {what}", flush=True)
    print("   " + " ".join(f"{k}={v!r}" for k, v in env.items()), flush=True)
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                           env={**os.environ, **env})
    print(f"== profile {name}: {'passed' if code == 0 else f'FAILED (pytest exit {code})'} "
          f"in {time.monotonic() - started:.0f} s", flush=True)
    return code


def _split(argv):
    if "--" not in argv:
        return argv, "--", []
    i = argv.index("--")
    return argv[:i], "--", argv[i + 1:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    argv = sys.argv[1:] if argv is None else argv
    ours, _, pytest_args = _split(argv)
    parser.add_argument("profiles", nargs="*", metavar="PROFILE",
                        help=f"profiles to run (default: all: {', '.join(PROFILES)}); pytest's flags after --")
    args = parser.parse_args(ours)
    unknown = [p for p in args.profiles if p not in PROFILES]
    if unknown:
        parser.error(f"unknown profile {', '.join(unknown)}; choose from {', '.join(PROFILES)}")
    pytest_args = pytest_args or ["tests"]
    failed = [name for name in args.profiles or PROFILES if run(name, pytest_args) != 0]
    if failed:
        print(f"profiles failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
