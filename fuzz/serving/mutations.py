"""Real requests of both protocols to graphrun serve, and a structure-aware mutator of them.

A case is one request: ("http", method, path, headers, body bytes) or ("grpc", rpc name, message bytes).
The seeds are well-formed requests for tests/models/mlp.pb (input "x" [?, 16] FP32): the Open
Inference Protocol's JSON and binary-data forms, TensorFlow Serving's rows and columns, the gRPC
ModelInfer (raw and typed contents), Predict and the metadata calls. Mutations work on the request's
structure (a JSON tree, a protobuf message's fields, the binary extension's sizes, the URL and
headers), and a few on its bytes, so most cases get past the JSON and protobuf parsers and reach the
checks behind them.
"""

import copy
import json
import random

import numpy as np

from graphdef._proto import oip_pb2, tfs_pb2

MODEL = "mlp"
HEADER_LENGTH = "Inference-Header-Content-Length"
ROW = [float(i) / 16 for i in range(16)]

# values a field can be replaced with: every JSON type, edge numbers, hostile strings
HOSTILE_STRINGS = ["", "x", "\x1b[2J", "a\x00b", "\u202e", "FP32", "BYTES", "serving_default", "mlp", "../mlp",
                   "x" * 5000, "%00", "instances", "inputs"]
HOSTILE_NUMBERS = [0, -1, 1, 2 ** 31, 2 ** 63, -(2 ** 63) - 1, 10 ** 30, 1e308, -1e308, 1.5, 16, 17, 2 ** 40]


def _oip_json():
    return {"id": "seed", "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 16], "data": ROW * 2}],
            "outputs": [{"name": "output/score", "parameters": {"binary_data": False}}]}


def http_seeds():
    """(method, path, headers, JSON object or bytes) of the HTTP seeds."""
    binary_header = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                                 "parameters": {"binary_data_size": 64}}],
                     "parameters": {"binary_data_output": True}}
    return [
        ("POST", f"/v2/models/{MODEL}/infer", {}, _oip_json()),
        ("POST", f"/v2/models/{MODEL}/versions/1/infer", {}, _oip_json()),
        ("POST", f"/v2/models/{MODEL}/infer", {"binary": True}, binary_header),
        ("POST", f"/v1/models/{MODEL}:predict", {}, {"instances": [ROW, ROW]}),
        ("POST", f"/v1/models/{MODEL}:predict", {}, {"signature_name": "serving_default", "instances": [{"x": ROW}]}),
        ("POST", f"/v1/models/{MODEL}/versions/1:predict", {}, {"inputs": {"x": [ROW]}}),
        ("POST", f"/v1/models/{MODEL}:predict", {}, {"inputs": [ROW], "output_filter": ["output/score"]}),
        ("GET", f"/v2/models/{MODEL}", {}, None),
        ("GET", f"/v2/models/{MODEL}/ready", {}, None),
        ("GET", f"/v1/models/{MODEL}/metadata", {}, None),
        ("GET", f"/v1/models/{MODEL}", {}, None),
        ("GET", "/v2/health/ready", {}, None),
    ]


def grpc_seeds():
    """(rpc, message) of the gRPC seeds."""
    raw = oip_pb2.ModelInferRequest(model_name=MODEL, id="seed")
    raw.inputs.add(name="x", datatype="FP32", shape=[1, 16])
    raw.raw_input_contents.append(np.array(ROW, np.float32).tobytes())
    raw.outputs.add(name="output/score")
    typed = oip_pb2.ModelInferRequest(model_name=MODEL, model_version="1")
    tensor = typed.inputs.add(name="x", datatype="FP32", shape=[2, 16])
    tensor.contents.fp32_contents.extend(ROW * 2)
    predict = tfs_pb2.PredictRequest()
    predict.model_spec.name = MODEL
    value = predict.inputs["x"]
    value.dtype = 1
    value.tensor_shape.dim.add(size=1)
    value.tensor_shape.dim.add(size=16)
    value.tensor_content = np.array(ROW, np.float32).tobytes()
    predict_typed = copy.deepcopy(predict)
    predict_typed.inputs["x"].ClearField("tensor_content")
    predict_typed.inputs["x"].float_val.extend(ROW)
    metadata = tfs_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
    metadata.model_spec.name = MODEL
    return [("ModelInfer", raw), ("ModelInfer", typed), ("Predict", predict), ("Predict", predict_typed),
            ("GetModelMetadata", metadata), ("ModelMetadata", oip_pb2.ModelMetadataRequest(name=MODEL)),
            ("ModelReady", oip_pb2.ModelReadyRequest(name=MODEL))]


# -- JSON ---------------------------------------------------------------------------------------

def _nodes(tree, path=()):
    """Every (path, value) in a JSON tree, the root first."""
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _nodes(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree[:20]):
            yield from _nodes(value, path + (i,))


def _set(tree, path, value):
    if not path:
        return value
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return tree


def _hostile_value(rng, old):
    choice = rng.randrange(10)
    if choice == 0:
        return rng.choice(HOSTILE_STRINGS)
    if choice == 1:
        return rng.choice(HOSTILE_NUMBERS)
    if choice == 2:
        return copy.deepcopy(rng.choice([None, True, False, [], {}, [[]], {"b64": "AAAA"}]))
    if choice == 3:  # nesting deeper than a parser's stack
        depth = rng.choice([10, 1000, 100_000])
        return json.loads("[" * depth + "]" * depth) if depth < 1000 else _Deep(depth)
    if choice == 4 and isinstance(old, list):
        return copy.deepcopy(old * rng.choice([0, 2, 100]) if len(old) < 1000 else old[: rng.randrange(len(old) + 1)])
    if choice == 5 and isinstance(old, (int, float)) and not isinstance(old, bool):
        return rng.choice([old + 1, old - 1, -old, old * 2 ** 32, float(old), str(old)])
    if choice == 6 and isinstance(old, str):
        return old + rng.choice(HOSTILE_STRINGS[:5])
    if choice == 7 and isinstance(old, dict) and old:
        old = dict(old)
        old.pop(rng.choice(list(old)))
        return old
    if choice == 8 and isinstance(old, dict):
        return {**old, rng.choice(["parameters", "data", "shape", "name", "datatype", "outputs", "instances",
                                   "inputs", "binary_data_size"]): _hostile_value(rng, None)}
    return copy.deepcopy(rng.choice([[ROW], ROW * 3, [[1, 2], [3]], [1e999], ["1"] * 16, [True] * 16,
                                     list(range(16))]))


class _Deep:
    """A nesting too deep to build as Python lists: written out by dumps() as brackets."""

    def __init__(self, depth):
        self.depth = depth


def dumps(tree):
    deep = []

    def default(value):
        if isinstance(value, _Deep):
            deep.append(value.depth)
            return f"@@DEEP{len(deep) - 1}@@"
        raise TypeError(type(value).__name__)

    text = json.dumps(tree, default=default, allow_nan=True)
    for i, depth in enumerate(deep):
        text = text.replace(f'"@@DEEP{i}@@"', "[" * depth + "]" * depth)
    return text.encode()


def mutate_json(rng, tree):
    tree = copy.deepcopy(tree)
    for _ in range(rng.choice([1, 1, 2, 3])):
        nodes = list(_nodes(tree))
        path, old = rng.choice(nodes)
        tree = _set(tree, path, _hostile_value(rng, old))
    return tree


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.choice([1, 2, 4])):
        if not data:
            data += bytes([rng.randrange(256)])
            continue
        at = rng.randrange(len(data))
        kind = rng.randrange(4)
        if kind == 0:
            data[at] = rng.randrange(256)
        elif kind == 1:
            del data[at:at + rng.randrange(1, 64)]
        elif kind == 2:
            data[at:at] = bytes(rng.choice([b"{", b"[", b"\x00", b"\"", b"9" * 400, b"\xff\xfe"]))
        else:
            data = data[:at]
    return bytes(data)


def http_case(rng, seed):
    method, path, flags, body = seed
    headers = {}
    binary = flags.get("binary")
    tree = body
    if body is not None and rng.random() < 0.85:
        tree = mutate_json(rng, body)
    data = b"" if tree is None else dumps(tree)
    if binary:
        blob = np.array(ROW, np.float32).tobytes()
        if rng.random() < 0.5:
            blob = mutate_bytes(rng, blob) if rng.random() < 0.5 else blob * rng.choice([0, 2])
        length = len(data)
        if rng.random() < 0.3:
            length = rng.choice([0, -1, length - 1, length + 1, len(data) + len(blob) + 1, "ten", 10 ** 20])
        headers[HEADER_LENGTH] = str(length)
        data += blob
    if rng.random() < 0.1:
        data = mutate_bytes(rng, data)
    if rng.random() < 0.1:
        path = rng.choice([path.replace(MODEL, rng.choice(["%1b%5b2J", "a" * 3000, "%00", "m%2Fx"])),
                           path.replace("versions/1", rng.choice(["versions/0", "versions/99999999999999999999",
                                                                  "versions/-1"])),
                           path + rng.choice(["/", "?x=1", "%"])])
    if rng.random() < 0.05:
        method = rng.choice(["GET", "PUT", "DELETE", "POST"])
    return ("http", method, path, headers, data)


# -- protobuf ------------------------------------------------------------------------------------

def _mutate_tensor_meta(rng, tensor):
    field = rng.randrange(4)
    if field == 0:
        tensor.name = rng.choice(HOSTILE_STRINGS)
    elif field == 1:
        tensor.datatype = rng.choice(["FP16", "FP64", "INT64", "BOOL", "BYTES", "UINT8", "", "fp32", "\x1b"])
    elif field == 2:
        del tensor.shape[:]
        tensor.shape.extend(rng.choice([[], [1], [16], [2, 8], [-1, 16], [2 ** 40, 2 ** 30], [0, 16], [1, 16, 1],
                                        [2 ** 62, 4]]))
    else:
        value = rng.choice([0, -1, 1, 2 ** 31, 2 ** 63 - 1, -(2 ** 63)])
        tensor.contents.int64_contents.extend([value] * rng.choice([1, 16]))


def mutate_model_infer(rng, message):
    kind = rng.randrange(7)
    if kind == 0:
        message.model_name = rng.choice(HOSTILE_STRINGS)
    elif kind == 1:
        message.model_version = rng.choice(["", "0", "2", "-1", "1\x00", "99999999999999999999", "x"])
    elif kind == 2 and message.inputs:
        _mutate_tensor_meta(rng, rng.choice(message.inputs))
    elif kind == 3:
        raw = list(message.raw_input_contents)
        del message.raw_input_contents[:]
        raw = rng.choice([raw + [bytes(64)], raw[:0], [r[: rng.randrange(len(r) + 1)] for r in raw],
                          [r + bytes(rng.choice([1, 4, 64])) for r in raw], [bytes(64)] * 3])
        message.raw_input_contents.extend(raw)
    elif kind == 4:
        message.inputs.add().CopyFrom(message.inputs[0]) if message.inputs else message.inputs.add(name="x")
    elif kind == 5:
        message.outputs.add(name=rng.choice(HOSTILE_STRINGS + ["output/score", "output/score:0", "x"]))
    else:
        message.id = rng.choice(HOSTILE_STRINGS)


def mutate_predict(rng, message):
    kind = rng.randrange(6)
    tensor = message.inputs["x"] if "x" in message.inputs else None
    if kind == 0:
        message.model_spec.name = rng.choice(HOSTILE_STRINGS)
    elif kind == 1:
        message.model_spec.signature_name = rng.choice(HOSTILE_STRINGS)
    elif kind == 2 and tensor is not None:
        tensor.dtype = rng.choice([0, 2, 3, 7, 9, 10, 14, 19, 20, 23, 99, -1])
    elif kind == 3 and tensor is not None:
        del tensor.tensor_shape.dim[:]
        for size in rng.choice([[], [1], [16], [-1, 16], [2 ** 40, 2 ** 30], [1, 16, 1], [0, 16]]):
            tensor.tensor_shape.dim.add(size=size)
        tensor.tensor_shape.unknown_rank = rng.random() < 0.1
    elif kind == 4 and tensor is not None:
        tensor.tensor_content = tensor.tensor_content[: rng.randrange(len(tensor.tensor_content) + 1)] \
            + bytes(rng.choice([0, 1, 64]))
        tensor.float_val.extend([1.0] * rng.choice([0, 1, 15]))
    else:
        message.output_filter.append(rng.choice(HOSTILE_STRINGS + ["output/score"]))
        if rng.random() < 0.3:
            message.model_spec.version.value = rng.choice([0, 1, 2, -1, 2 ** 62])


def grpc_case(rng, seed):
    rpc, message = seed
    message = copy.deepcopy(message)
    for _ in range(rng.choice([1, 1, 2, 3])):
        if rpc == "ModelInfer":
            mutate_model_infer(rng, message)
        elif rpc == "Predict":
            mutate_predict(rng, message)
        elif rpc == "GetModelMetadata":
            message.model_spec.name = rng.choice(HOSTILE_STRINGS)
            message.metadata_field.append(rng.choice(HOSTILE_STRINGS))
        else:
            message.name = rng.choice(HOSTILE_STRINGS)
    data = message.SerializeToString()
    if rng.random() < 0.1:
        data = mutate_bytes(rng, data)
    return ("grpc", rpc, data)


def cases(seed):
    """An endless stream of cases from a fixed seed: about half each protocol, the seeds themselves too."""
    rng = random.Random(seed)
    http, grpc = http_seeds(), grpc_seeds()
    while True:
        if rng.random() < 0.5:
            base = rng.choice(http)
            yield http_case(rng, base) if rng.random() < 0.95 else ("http", base[0], base[1], {},
                                                                      b"" if base[3] is None else dumps(base[3]))
        else:
            yield grpc_case(rng, rng.choice(grpc))
