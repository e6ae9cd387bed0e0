"""What the graphrun-cc tests share: graphs built with the generated protobuf classes, and the runner
(RUNNER, the `cc_runner` fixture of conftest.py) run as a subprocess by `run_cc`, the one place that
runs it. Comparisons are in tests/support/numerics_policy.py."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.ops import REGISTRY
from graphdef.ops.cc_pending import cc_pending
from tests.conformance.replay import from_json_output


REPO = Path(__file__).resolve().parents[2]


# the one place the runner's path is written; tests take it from the `cc_runner` fixture, which builds it
RUNNER = REPO / "build" / "graphrun-cc"


DT = graph_pb2.DataType


DTYPES = {
    np.dtype(np.float32): DT.DT_FLOAT, np.dtype(np.float64): DT.DT_DOUBLE,
    np.dtype(np.int8): DT.DT_INT8, np.dtype(np.int16): DT.DT_INT16,
    np.dtype(np.int32): DT.DT_INT32, np.dtype(np.int64): DT.DT_INT64,
    np.dtype(np.uint8): DT.DT_UINT8, np.dtype(np.uint16): DT.DT_UINT16,
    np.dtype(np.uint32): DT.DT_UINT32, np.dtype(np.uint64): DT.DT_UINT64,
    np.dtype(np.bool_): DT.DT_BOOL,
}


# every op the registry defines but those whose kernel is pending, and nothing else
# (tests/python/ops/test_schema.py compares their signatures)
KERNELS = sorted(set(REGISTRY) - cc_pending())


def dtype_enum(dtype):
    return DTYPES[np.dtype(dtype)]


def tensor_proto(array, typed_field=False):
    """A TensorProto of `array`: tensor_content (TF's choice for >1 element) or the typed field."""
    array = np.asarray(array)
    proto = graph_pb2.TensorProto(dtype=dtype_enum(array.dtype))
    for d in array.shape:
        proto.tensor_shape.dim.add().size = d
    if array.size > 1 and not typed_field:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<")).tobytes()
        return proto
    kind = array.dtype
    flat = array.reshape(-1).tolist()
    if kind == np.float32:
        proto.float_val.extend(flat)
    elif kind == np.float64:
        proto.double_val.extend(flat)
    elif kind == np.int64:
        proto.int64_val.extend(flat)
    elif kind == np.uint32:
        proto.uint32_val.extend(flat)
    elif kind == np.uint64:
        proto.uint64_val.extend(flat)
    elif kind == np.bool_:
        proto.bool_val.extend(flat)
    else:
        proto.int_val.extend(flat)
    return proto


class Graph:
    """A GraphDef under construction; each method adds one node and returns its name."""

    def __init__(self):
        self.proto = graph_pb2.GraphDef()
        self.proto.versions.producer = 2474

    def node(self, name, op, inputs=(), **attrs):
        node = self.proto.node.add(name=name, op=op)
        node.input.extend(inputs)
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value)
        return name

    def const(self, name, value, dtype=None, typed_field=False):
        array = np.asarray(value, dtype=dtype)
        return self.node(name, "Const", dtype=type_attr(array.dtype),
                         value=graph_pb2.AttrValue(tensor=tensor_proto(array, typed_field)))

    def placeholder(self, name, dtype, shape=None, op="Placeholder", inputs=()):
        attrs = {"dtype": type_attr(dtype)}
        if shape is not None:
            attrs["shape"] = shape_attr(shape)
        return self.node(name, op, inputs, **attrs)

    def op(self, name, op, inputs, dtype, **attrs):
        """An op whose dtype attr is T."""
        return self.node(name, op, inputs, T=type_attr(dtype), **attrs)

    def save(self, path):
        path = Path(path)
        path.write_bytes(self.proto.SerializeToString(deterministic=True))
        return path


def type_attr(dtype):
    return graph_pb2.AttrValue(type=dtype_enum(dtype))


def bool_attr(value):
    return graph_pb2.AttrValue(b=value)


def shape_attr(dims):
    """dims: a list with -1 for unknown dims, or "unknown" for unknown rank."""
    attr = graph_pb2.AttrValue()
    attr.shape.SetInParent()
    if dims == "unknown":
        attr.shape.unknown_rank = True
    else:
        for d in dims:
            attr.shape.dim.add().size = d
    return attr


def run_cc(runner, *args, env=None, timeout=300):
    """(exit code, stdout, stderr) of graphrun-cc; dying by a signal fails the test. `env` sets
    variables over this process's environment, a None value removes one."""
    full_env = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    proc = subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=full_env)
    assert proc.returncode >= 0, f"graphrun-cc died with signal {-proc.returncode}: {proc.stderr[-2000:]}"
    return proc.returncode, proc.stdout, proc.stderr


def listed_kernels(runner):
    """The op types graphrun-cc --list-kernels names."""
    return {line.split()[0] for line in ok(runner, "--list-kernels").splitlines() if line.strip()}


def ok(runner, *args):
    code, stdout, stderr = run_cc(runner, *args)
    assert code == 0, f"exit {code}: {stderr}"
    assert stderr == ""
    return stdout


def fails(runner, code, *args):
    """The one stderr line of a run that must exit with `code`."""
    got, stdout, stderr = run_cc(runner, *args)
    assert got == code, f"exit {got}, expected {code}: {stderr}"
    lines = stderr.splitlines()
    assert len(lines) == 1 and stderr.endswith("\n"), f"stderr is not one line: {stderr!r}"
    assert lines[0].startswith("graphrun-cc: ")
    assert stdout == ""
    return lines[0]


def outputs(runner, model, *args):
    """{fetch name: ndarray} from --json output, decoded independently of the runner."""
    stdout = ok(runner, model, *args, "--json")
    assert stdout.endswith("\n") and stdout.count("\n") == 1
    return dict(from_json_output(out) for out in json.loads(stdout)["outputs"])


def output(runner, model, *args):
    """The single fetched value."""
    (value,) = outputs(runner, model, *args).values()
    return value


def binary_graph(tmp_path, op, x, y, dtype=None):
    g = Graph()
    g.const("x", x, dtype)
    g.const("y", y, dtype)
    g.op("z", op, ["x", "y"], np.asarray(x, dtype).dtype)
    return g.save(tmp_path / "model.pb")


def unary_graph(tmp_path, op, x, dtype=None):
    g = Graph()
    g.const("x", x, dtype)
    g.op("z", op, ["x"], np.asarray(x, dtype).dtype)
    return g.save(tmp_path / "model.pb")


def reduction_graph(tmp_path, op, x, axes, keep_dims=False, axes_dtype=np.int32):
    g = Graph()
    g.const("x", x)
    g.const("axes", axes, axes_dtype)
    g.op("z", op, ["x", "axes"], np.asarray(x).dtype, keep_dims=bool_attr(keep_dims),
         Tidx=type_attr(axes_dtype))
    return g.save(tmp_path / "model.pb")


X23 = np.array([[1.5, -2.0, 0.1], [4.0, 0.0, -7.25]], np.float32)


def op_graph(tmp_path, op, inputs, dtype, **attrs):
    """Consts a, b, ... holding `inputs`, feeding `op` as node "z" of type `dtype`."""
    g = Graph()
    names = [g.const("abcdef"[i], value) for i, value in enumerate(inputs)]
    g.op("z", op, names, dtype, **attrs)
    return g.save(tmp_path / "model.pb")


def fed_graph(tmp_path, op, inputs, **attrs):
    """Placeholders a, b, ... of unknown shape feeding `op` as node "z" (T from the first)."""
    g = Graph()
    names = []
    for i, dtype in enumerate(inputs):
        names.append(g.placeholder("abcdef"[i], dtype))
    g.op("z", op, names, inputs[0], **attrs)
    return g.save(tmp_path / "model.pb")


def feeds(**values):
    return [arg for name, value in values.items() for arg in ("--feed", f"{name}={json.dumps(value)}")]


def variable_graph(g, name="v", dtype=np.float32, shape=(2,)):
    return g.node(name, "VariableV2", dtype=type_attr(dtype), shape=shape_attr(list(shape)),
                  container=graph_pb2.AttrValue(s=b""), shared_name=graph_pb2.AttrValue(s=b""))


def regression_data(rows=4):
    """Features [rows,3] and targets [rows] in float32; rows < 8 keeps every sum in the graph
    (over the 3 features, over the batch) a plain left-to-right sum in numpy too."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(rows, 3)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.5], np.float32) + np.float32(0.75)).astype(np.float32)
    return x, y


def feed_graph(tmp_path, dtype=np.float32, shape=None):
    g = Graph()
    g.placeholder("x", dtype, shape)
    g.op("y", "Identity", ["x"], dtype)
    return g.save(tmp_path / "model.pb")


def ints_attr(values):
    return graph_pb2.AttrValue(list=graph_pb2.AttrValue.ListValue(i=list(values)))


def str_attr(value):
    return graph_pb2.AttrValue(s=value.encode())


def float_attr(value):
    return graph_pb2.AttrValue(f=value)
