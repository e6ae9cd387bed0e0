"""The C SDK as a C programmer gets it: dist/graphrun-c-<version>-linux-x86_64.tar.gz (`make sdk`) untarred
into a temporary folder, its example examples/c/classify.c compiled against it with pkg-config and with
CMake (nothing of the source tree on any include or library path), and run on a classifier built here
with graphdef; the printed class and score are checked against numpy."""

import os
import re
import shutil
import subprocess
import tarfile

import numpy as np
import pytest

import graphdef as tf
from tests.support.cc_helpers import REPO

# Each test compiles the C example (with pkg-config or CMake) against the untarred SDK.
pytestmark = pytest.mark.slow

VERSION = re.search(r'^version = "(.*)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
SDK = REPO / "dist" / f"graphrun-c-{VERSION}-linux-x86_64.tar.gz"
FEATURES, CLASSES = 6, 4
# Where a program's libraries may come from besides the SDK: glibc's and gcc's runtime.
SYSTEM = re.compile(r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)"
                    r"\.so(\.[\d.]+)?$")


@pytest.fixture(scope="module")
def sdk(tmp_path_factory):
    """The untarred SDK's folder."""
    if not SDK.exists():
        pytest.fail(f"{SDK.relative_to(REPO)} is missing: run `make sdk` (make test builds it first)")
    if os.path.getmtime(SDK) < os.path.getmtime(REPO / "build" / "libgraphrun.so"):
        pytest.fail(f"{SDK.relative_to(REPO)} is older than build/libgraphrun.so: run `make sdk`")
    for tool in ("cc", "pkg-config", "cmake"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed: `make sdk` installs what this test needs")
    top = tmp_path_factory.mktemp("sdk")
    with tarfile.open(SDK) as archive:
        archive.extractall(top, filter="data")
    (root,) = top.iterdir()
    assert root.name == SDK.name.removesuffix(".tar.gz")
    return root


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    """(model path, W, b): softmax(x @ W + b), x a [None, 6] float32 placeholder, saved by graphdef's writer."""
    rng = np.random.default_rng(32)
    w = rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)
    b = rng.standard_normal(CLASSES).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        logits = tf.add(tf.matmul(x, tf.constant(w, name="W")), tf.constant(b, name="b"), name="logits")
        tf.nn.softmax(logits, name="probs")
    path = tmp_path_factory.mktemp("model") / "classifier.pb"
    tf.save(graph, path)
    return path, w, b


def expected(x, w, b):
    """Each row's (class, score) by numpy, in float64."""
    logits = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return [(int(row.argmax()), float(row.max())) for row in probs]


def clean_env():
    """The environment without anything that could point a program at the source tree."""
    drop = ("LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH",
            "GRAPHDEF_LIBGRAPHRUN", "GRAPHRUN_CC")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run(command, cwd, env):
    proc = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{command}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc.stdout


def classify(program, model, x, cwd, input_file=None):
    """Runs the example; its (class, score) per row."""
    out = run([program, model, *([input_file] if input_file else [])], cwd, clean_env())
    rows = re.findall(r"^row (\d+): class (\d+) score ([\d.]+)$", out, re.M)
    assert [int(r) for r, _, _ in rows] == list(range(len(x))), out
    return [(int(c), float(s)) for _, c, s in rows]


def assert_classified(got, want):
    assert [c for c, _ in got] == [c for c, _ in want]
    # the example prints 6 decimals; float32 softmax is within a few ulps of float64's
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=2e-6)


def assert_loads_from(program, sdk):
    """Every library the program loads is the SDK's or the system's C/C++ runtime, none from the source tree."""
    out = run(["ldd", program], program.parent, clean_env())
    lib = (sdk / "lib").resolve()
    loaded = re.findall(r"^\s*(\S+)\s+=>\s+(\S+)", out, re.M)
    assert "libgraphrun.so" in dict(loaded), out
    for soname, where in loaded:
        where = os.path.realpath(where)
        assert not where.startswith(str(REPO)), f"{soname} from the source tree: {where}"
        assert os.path.dirname(where) == str(lib) or SYSTEM.match(soname), f"{soname} from {where}"


def test_sdk_layout(sdk):
    for path in ["include/graphrun_c.h", "lib/libgraphrun.so", "lib/libdnnl.so.3", "lib/pkgconfig/graphrun.pc",
                 "lib/cmake/graphrun/graphrun-config.cmake", "lib/cmake/graphrun/graphrun-config-version.cmake",
                 "examples/c/classify.c", "examples/c/CMakeLists.txt",
                 "licenses/onednn-LICENSE.txt", "licenses/onednn-THIRD-PARTY-PROGRAMS.txt"]:
        assert (sdk / path).is_file() and not (sdk / path).is_symlink(), path
    runpath = run(["readelf", "-d", sdk / "lib/libgraphrun.so"], sdk, clean_env())
    assert re.search(r"RUNPATH.*\[\$ORIGIN\]", runpath), runpath


def test_example_with_pkg_config(sdk, classifier, tmp_path):
    model, w, b = classifier
    env = {**clean_env(), "PKG_CONFIG_PATH": str(sdk / "lib" / "pkgconfig")}
    flags = run(["pkg-config", "--cflags", "--libs", "graphrun"], tmp_path, env).split()
    assert run(["pkg-config", "--modversion", "graphrun"], tmp_path, env).strip() == VERSION
    assert not any(str(REPO) in f for f in flags), flags
    program = tmp_path / "classify"
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", program, sdk / "examples/c/classify.c", *flags],
        tmp_path, env)
    assert_loads_from(program, sdk)

    x = np.random.default_rng(7).standard_normal((5, FEATURES)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert_classified(classify(program, model, x, tmp_path, tmp_path / "x.npy"), expected(x, w, b))
    x.tofile(tmp_path / "x.raw")  # raw float32: the open batch dim from the file's size
    assert_classified(classify(program, model, x, tmp_path, tmp_path / "x.raw"), expected(x, w, b))


def test_example_refuses_a_raw_file_shorter_than_a_fixed_input(sdk, tmp_path):
    """A raw file of 3 values for an input [2, 6]: the example must say so, never hand the library a
    buffer shorter than the shape it names (which the library then reads past)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, FEATURES], name="x")
        tf.nn.softmax(tf.matmul(x, tf.constant(np.ones((FEATURES, CLASSES), np.float32))), name="probs")
    model = tmp_path / "fixed.pb"
    tf.save(graph, model)
    flags = run(["pkg-config", "--cflags", "--libs", "graphrun"], tmp_path,
                {**clean_env(), "PKG_CONFIG_PATH": str(sdk / "lib/pkgconfig")}).split()
    program = tmp_path / "classify"
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", program, sdk / "examples/c/classify.c", *flags],
        tmp_path, clean_env())
    np.float32([1, 2, 3]).tofile(tmp_path / "short.raw")
    proc = subprocess.run([str(program), str(model), str(tmp_path / "short.raw")], cwd=tmp_path, env=clean_env(),
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "holds 3 float32 values, input x takes 12" in proc.stderr, proc
    assert "row " not in proc.stdout


def test_example_with_cmake(sdk, classifier, tmp_path):
    model, w, b = classifier
    build = tmp_path / "build"
    run(["cmake", "-S", sdk / "examples/c", "-B", build, f"-DCMAKE_PREFIX_PATH={sdk}"], tmp_path, clean_env())
    run(["cmake", "--build", build], tmp_path, clean_env())
    program = build / "classify"
    assert str(REPO) not in (build / "CMakeCache.txt").read_text()
    assert_loads_from(program, sdk)

    x = np.full((1, FEATURES), 0.5, np.float32)  # no input file: every element 0.5, one row
    assert_classified(classify(program, model, x, tmp_path), expected(x, w, b))

