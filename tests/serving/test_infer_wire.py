"""ModelInferRequest's raw contents read in place (graphdef/serving/infer_wire.py) give what
protobuf's own parser gives, for every layout of the fields, and anything unusual is left to it."""

import random

import numpy as np
import pytest
from google.protobuf.message import DecodeError

from graphdef._proto import oip_pb2
from graphdef.serving.grpc_server import _InferRequest, _parse_infer, _Unparsable
from graphdef.serving.infer_wire import split_raw_contents


def _varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number, wire):
    return _varint(number << 3 | wire)


def _field(number, payload):
    return _key(number, 2) + _varint(len(payload)) + payload


def _shuffled_request(rng):
    """A valid request as wire bytes, its top-level fields in a random order (protobuf accepts any)."""
    request = oip_pb2.ModelInferRequest(model_name="m", id=f"id-{rng.random()}", model_version="2")
    count = rng.randint(1, 3)
    raws = [rng.randbytes(rng.choice([0, 1, 4, 127, 128, 300, 70000])) for _ in range(count)]
    for k in range(count):
        request.inputs.add(name=f"x{k}", datatype="FP32", shape=[1, len(raws[k]) // 4])
    request.parameters["p"].int64_param = 7
    pieces = [oip_pb2.ModelInferRequest(model_name="m").SerializeToString(),
              oip_pb2.ModelInferRequest(id=request.id).SerializeToString(),
              oip_pb2.ModelInferRequest(model_version="2").SerializeToString()]
    pieces += [oip_pb2.ModelInferRequest(inputs=[t]).SerializeToString() for t in request.inputs]
    pieces.append(oip_pb2.ModelInferRequest(parameters={"p": request.parameters["p"]}).SerializeToString())
    pieces.append(_key(99, 0) + _varint(5))          # an unknown varint field
    pieces.append(_key(98, 5) + b"\1\2\3\4")         # an unknown fixed32 field
    pieces.append(_key(97, 1) + bytes(8))            # an unknown fixed64 field
    rng.shuffle(pieces)
    for raw in raws:  # the raw entries keep their order among themselves, anywhere among the rest
        pieces.insert(rng.randint(0, len(pieces)), _field(7, raw))
    return b"".join(pieces)


@pytest.mark.parametrize("seed", range(40))
def test_the_split_agrees_with_protobufs_parser(seed):
    data = _shuffled_request(random.Random(seed))
    whole = oip_pb2.ModelInferRequest.FromString(data)
    rest, raw = split_raw_contents(data)
    assert [bytes(v) for v in raw] == list(whole.raw_input_contents)
    expected = oip_pb2.ModelInferRequest()
    expected.CopyFrom(whole)
    del expected.raw_input_contents[:]
    assert oip_pb2.ModelInferRequest.FromString(rest) == expected
    parsed = _parse_infer(data)
    assert isinstance(parsed, _InferRequest) and parsed.id == whole.id and parsed.model_name == "m"


def test_the_tensor_is_read_in_place():
    image = np.arange(12, dtype=np.float32)
    request = oip_pb2.ModelInferRequest(model_name="m")
    request.raw_input_contents.append(image.tobytes())
    data = request.SerializeToString()
    parsed = _parse_infer(data)
    assert parsed.raw[0].obj is data
    np.testing.assert_array_equal(np.frombuffer(parsed.raw[0], np.float32), image)


NOT_PLAIN = [
    ("a group", _key(5, 3) + _key(5, 4) + _field(7, b"abcd")),
    ("a cut-off length", _field(7, b"abcd")[:-1]),
    ("a varint past 10 bytes", _field(7, b"abcd") + _key(1, 0) + b"\xff" * 11),
    ("field 7 as a varint", _field(7, b"abcd") + _key(7, 0) + b"\1"),
    ("field number 0", _field(7, b"abcd") + b"\0\1"),
    ("no raw contents", oip_pb2.ModelInferRequest(model_name="m").SerializeToString()),
    ("a bad model name", _field(1, b"\xff\xfe") + _field(7, b"abcd")),
]


@pytest.mark.parametrize("name,data", NOT_PLAIN, ids=[n for n, _ in NOT_PLAIN])
def test_anything_unusual_is_parsed_as_protobuf_parses_it(name, data):
    parsed = _parse_infer(data)
    try:
        whole = oip_pb2.ModelInferRequest.FromString(data)
    except DecodeError:
        assert isinstance(parsed, _Unparsable) and "does not parse as ModelInferRequest" in parsed.message
        return
    assert isinstance(parsed, _InferRequest)
    assert parsed.message == whole and [bytes(v) for v in parsed.raw] == list(whole.raw_input_contents)
