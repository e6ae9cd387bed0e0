"""The wheel as a user gets it: installed with pip into a new virtualenv in a temporary folder, and run
from there, away from the source tree.

    python packaging/smoke_test.py [dist/graphdef-*.whl] [--keep]

Checks: auditwheel names a manylinux policy and no library outside the wheel; `ldd` of every native file
in the installed package resolves to the package itself or to the system libraries every manylinux
policy allows; the seed program's 3.75 from its Python Session, `graphrun`, `graphrun-cc` and
Session(engine="python"/"cc"); TensorFlow-made frozen graphs (tests/tf_models) through `graphrun-cc` and
`graphrun` against TensorFlow's saved outputs and against each other; Session(engine="cc") against
Session(engine="python") under the numerics policy; `graphrun serve --runtime cc` over REST.
The script runs itself a second time inside the new virtualenv (--inside) for the checks that need the
installed package.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TF_MODELS = ["mlp", "cnn"]  # small TensorFlow-made graphs: MatMul/BiasAdd/Softmax, and Conv2D/pooling
# What every manylinux policy lets a wheel take from the system (glibc's and gcc's runtime).
SYSTEM = re.compile(r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)"
                    r"\.so(\.[\d.]+)?$")
# Variables that would point the installed package at files outside it.
SCRUB = ("PYTHONPATH", "GRAPHDEF_LIBGRAPHRUN", "GRAPHRUN_CC", "GRAPHDEF_ENGINE", "VIRTUAL_ENV", "PYTHONHOME")


def step(what):
    print(f"smoke: {what}", flush=True)


def run(command, cwd, env=None, **kw):
    proc = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"smoke: FAILED {' '.join(map(str, command))} (exit {proc.returncode}):\n"
                 f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout


# ---- outside: in the source tree's Python, around a fresh virtualenv ----

def the_wheel(argument):
    if argument:
        return Path(argument).resolve()
    version = re.search(r'^version = "(.*)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    found = sorted((ROOT / "dist").glob(f"graphdef-{version}-py3-none-*.whl"))
    if len(found) != 1:
        sys.exit(f"smoke: expected one dist/graphdef-{version}-py3-none-*.whl, found {found}: run `make wheel`")
    return found[0]


def check_auditwheel(wheel):
    auditwheel = Path(sys.executable).parent / "auditwheel"
    # JSON: the text report stops before its list of external libraries when the symbol versions alone
    # decide the policy
    report = json.loads(run([auditwheel, "show", "--json", wheel], cwd=ROOT))
    policy = report["overall_tag"]
    assert re.fullmatch(r"manylinux_\d+_\d+_x86_64", policy), f"auditwheel names no manylinux policy: {report}"
    assert report["external_libs"] == {}, f"the wheel needs libraries it does not carry: {report['external_libs']}"
    assert policy in wheel.name, f"{wheel.name} is not tagged {policy}"
    step(f"auditwheel show: {policy}, no external libraries")


def outside(wheel, keep):
    check_auditwheel(wheel)
    top = Path(tempfile.mkdtemp(prefix="graphdef-smoke-"))
    assert ROOT not in top.parents, f"{top} is inside the source tree"
    try:
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        venv = top / "venv"
        step(f"virtualenv in {top}; pip install {wheel.name}[serve]")
        # the base interpreter, not the source tree's .venv, so nothing of the checkout's is importable
        base = Path(getattr(sys, "_base_executable", sys.executable))
        run([base, "-m", "venv", venv], cwd=top, env=env)
        run([venv / "bin/python", "-m", "pip", "install", "-q", f"{wheel}[serve]"], cwd=top, env=env)
        work = top / "work"
        work.mkdir()
        shutil.copy(__file__, work / "smoke_test.py")
        shutil.copy(ROOT / "examples/seed.py", work / "seed.py")
        for name in TF_MODELS:
            shutil.copytree(ROOT / "tests/tf_models" / name, work / name)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        started = time.monotonic()
        proc = subprocess.run([venv / "bin/python", "smoke_test.py", "--inside", str(ROOT)], cwd=work, env=env)
        if proc.returncode != 0:
            sys.exit(f"smoke: FAILED inside the virtualenv ({top} kept)")
        step(f"passed ({time.monotonic() - started:.0f} s in the virtualenv)")
    except BaseException:
        keep = True
        raise
    finally:
        if not keep:
            shutil.rmtree(top, ignore_errors=True)


# ---- inside: the installed package, from a folder outside the source tree ----

def check_location(source_tree):
    import graphdef
    from graphdef import _native

    package = Path(graphdef.__file__).resolve().parent
    assert Path(sys.prefix) in package.parents, f"graphdef imported from {package}, not the virtualenv"
    assert source_tree not in Path.cwd().parents and Path.cwd() != source_tree
    for path in (_native.library_path(), _native.executable_path()):
        assert path.is_file() and not path.is_symlink() and package in path.parents, path
    return package / "_native"


def check_ldd(native, source_tree):
    elves = [p for p in sorted(native.iterdir()) if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert {"graphrun-cc", "libgraphrun.so", "libdnnl.so.3"} <= {p.name for p in elves}, elves
    assert (native / "licenses" / "onednn-LICENSE.txt").is_file(), "the bundled libraries' licenses are missing"
    for path in elves:
        assert not path.is_symlink(), f"{path} is a link"
        for line in run(["ldd", path], cwd=native).splitlines():
            m = re.match(r"\s*(\S+)(?:\s+=>\s+(.+?))?\s+\(0x", line)
            assert m or "statically linked" in line, f"{path.name}: ldd says {line!r}"
            if not m:
                continue
            soname, where = m.group(1), m.group(2)
            assert where != "not found", f"{path.name}: {soname} not found"
            where = Path(where or soname).resolve()
            if where.parent == native.resolve():
                continue
            assert SYSTEM.match(Path(soname).name), f"{path.name} loads {soname} from {where}, outside the package"
            assert source_tree not in where.parents, f"{path.name} loads {where} from the source tree"
    step(f"ldd: {len(elves)} native files load only each other and the system's libc/libm/libstdc++/libgcc_s")


def check_seed():
    import numpy as np

    import graphdef as tf

    out = run([sys.executable, "seed.py", "seed.pb"], cwd=".")
    assert "Session.run: 3.75" in out, out
    answers = {"seed.py Session": 3.75}
    for engine in ("python", "cc"):  # graphrun (Python CLI) on each engine
        doc = json.loads(run(["graphrun", "seed.pb", "--json"], cwd=".", env={**os.environ, "GRAPHDEF_ENGINE": engine}))
        answers[f"graphrun ({engine})"] = doc["outputs"][0]["values"]
    answers["graphrun-cc"] = json.loads(run(["graphrun-cc", "seed.pb", "--json"], cwd="."))["outputs"][0]["values"]
    graph = tf.load("seed.pb")
    for engine in ("python", "cc"):
        with tf.Session(graph=graph, engine=engine) as sess:
            answers[f"Session(engine={engine!r})"] = float(sess.run(graph.get_tensor_by_name("Divide:0")))
    assert all(np.float64(v) == 3.75 for v in answers.values()), answers
    step("seed program: 3.75 from " + ", ".join(answers))


def conforms(actual, expected, graph_def, fetch):
    """None, or why `actual` is not `expected` within the numerics policy for `fetch` of `graph_def`."""
    import numpy as np

    from graphdef.framework.numerics import combined
    from graphdef.ops.registry import numerics_of

    expected = np.asarray(expected)
    return combined([numerics_of(graph_def, fetch)]).tolerance(expected.dtype).mismatch(np.asarray(actual), expected)


def check_tf_models():
    import numpy as np

    import graphdef as tf
    from graphdef.framework.numerics import Tolerance

    for name in TF_MODELS:
        case = json.loads(Path(name, "case.json").read_text())
        model = Path(name, "model.pb")
        graph_def = tf.GraphDef.FromString(model.read_bytes())
        feeds = [f"--feed={k}=@{Path(name, v)}" for k, v in case["feeds"].items()]
        fetches = [f"--fetch={f}" for f in case["fetches"]]
        results = {}
        for who, command, env in [
                ("graphrun-cc", ["graphrun-cc"], {}),
                ("graphrun (python)", ["graphrun"], {"GRAPHDEF_ENGINE": "python"})]:
            out = Path(name, who.split()[0] + "-out")
            run([*command, model, *feeds, *fetches, "--out", out], cwd=".", env={**os.environ, **env})
            results[who] = [np.load(out / f"{f.replace(':', '_').replace('/', '_')}.npy") for f in case["fetches"]]
        for k, (fetch, want_file) in enumerate(zip(case["fetches"], case["expected"])):
            tf_made = np.load(Path(name, want_file))
            cc, py = results["graphrun-cc"][k], results["graphrun (python)"][k]
            # TensorFlow's own outputs, within the tolerance the committed case was made with
            tolerance = Tolerance(**case["tolerances"][k])
            for who in results:
                why = tolerance.mismatch(results[who][k], tf_made)
                assert why is None, f"{name} {fetch}: {who} and TensorFlow differ: {why}"
            why = conforms(cc, py, graph_def, fetch)
            assert why is None, f"{name} {fetch}: graphrun-cc and graphrun (python) differ: {why}"
        step(f"TensorFlow-made {name}: graphrun-cc and graphrun (python) agree with TensorFlow and each other")


def check_session_engines(native):
    import numpy as np

    import graphdef as tf
    from graphdef.client.session import plan_engine

    for name in TF_MODELS:
        case = json.loads(Path(name, "case.json").read_text())
        graph = tf.load(str(Path(name, "model.pb")))
        feed = {graph.get_tensor_by_name(k + ":0"): np.load(Path(name, v)) for k, v in case["feeds"].items()}
        fetches = [graph.get_tensor_by_name(f) for f in case["fetches"]]
        got = {}
        for engine in ("python", "cc", None):
            with tf.Session(graph=graph, engine=engine) as sess:
                # the engine that ran is the one asked for; the default picks cc, the library being here
                assert plan_engine(sess, fetches, feed) == (engine or "cc"), (name, engine)
                got[engine] = sess.run(fetches, feed)
        graph_def = tf.GraphDef.FromString(Path(name, "model.pb").read_bytes())
        for fetch, cc, py in zip(case["fetches"], got["cc"], got["python"]):
            why = conforms(cc, py, graph_def, fetch)
            assert why is None, f"{name} {fetch}: Session(engine='cc') and Session(engine='python') differ: {why}"
    check_loaded_from(native)
    step("Session(engine='cc') (and the default, which picks it) agrees with Session(engine='python') under "
         "the numerics policy")


def check_loaded_from(native):
    """The libraries this process mapped for the cc engine are the package's, not the system's namesakes (but
    libz and libcrypto, which Python's zlib and ssl may have loaded first: the loader shares one per soname)."""
    ours = re.compile(r"/(libgraphrun|libdnnl|libprotobuf|libzip|libgomp)[^/]*\.so[^/]*$")
    mapped = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
              if ours.search(line.split()[-1])}
    assert any(p.endswith("/libgraphrun.so") for p in mapped), mapped
    outside = [p for p in mapped if Path(p).parent != native]
    assert not outside, f"the process loaded these from outside the package: {outside}"


def check_serve():
    import numpy as np

    import graphdef as tf

    case = json.loads(Path("mlp", "case.json").read_text())
    x = np.load(Path("mlp", case["feeds"]["x"]))
    process = subprocess.Popen(["graphrun", "serve", "mlp/model.pb", "--model-name", "mlp", "--runtime", "cc",
                                "--port-http", "0", "--port-grpc", "0", "--access-log", "-"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("graphrun serve: ready"), line + process.stderr.read()[-2000:] if not line else line
        port = dict(part.split("=") for part in line.split()[3:])["http"]
        body = json.dumps({"instances": x.tolist()}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models/mlp:predict", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())["predictions"]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    graph = tf.load("mlp/model.pb")
    with tf.Session(graph=graph, engine="python") as sess:
        want = sess.run(graph.get_tensor_by_name(case["fetches"][-1]), {graph.get_tensor_by_name("x:0"): x})
    got = np.asarray(answer, np.float32)
    if got.ndim == want.ndim + 1 or got.shape != want.shape:  # several outputs: REST names each
        got = np.asarray([row[case["fetches"][-1].split(":")[0]] for row in answer], np.float32)
    why = conforms(got, want, tf.GraphDef.FromString(Path("mlp/model.pb").read_bytes()), case["fetches"][-1])
    assert why is None, f"graphrun serve --runtime cc and Session(engine='python') differ: {why}"
    step("graphrun serve --runtime cc: REST predictions agree with Session(engine='python')")


def inside(source_tree):
    native = check_location(source_tree)
    check_ldd(native, source_tree)
    check_seed()
    check_tf_models()
    check_session_engines(native)
    check_serve()


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--inside"]:
        inside(Path(args[1]))
    else:
        keep = "--keep" in args
        rest = [a for a in args if a != "--keep"]
        outside(the_wheel(rest[0] if rest else None), keep)
