"""Mutated images (bytes flipped, runs zeroed, cut short, headers lengthened) through every decode op:
each run gives pixels or one clean error line naming the node, never another exception. A seeded
mini-fuzz over every format; the fuzzers (fuzz/) carry the long campaigns."""

import numpy as np
import pytest

import graphdef
from graphdef.framework.errors import OpError
from tests.python.images import made

SEEDS = {"jpeg": made.jpeg(height=20, width=24), "jpeg-progressive": made.jpeg(height=20, width=24, progressive=True),
         "png": made.png(height=9, width=11), "png16": made.png(height=9, width=11, channels=1, bits=16),
         "palette": made.palette_png(transparent=True), "gif": made.gif(3), "bmp": made.bmp(),
         "webp": made.webp(3), "cmyk": made.cmyk_jpeg(height=9, width=11)}
OPS = [("DecodeImage", {}), ("DecodeJpeg", {"channels": 3}), ("DecodePng", {"dtype": graphdef.uint16}),
       ("DecodeGif", {}), ("DecodeBmp", {}), ("DecodeWebP", {}), ("ExtractJpegShape", {})]


def mutations(data, rng, count):
    for _ in range(count):
        out = bytearray(data)
        kind = rng.integers(4)
        if kind == 0:
            for i in rng.integers(0, len(out), size=rng.integers(1, 8)):
                out[i] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            start = int(rng.integers(0, len(out)))
            out[start:start + int(rng.integers(1, 64))] = bytes(min(64, len(out) - start))
        elif kind == 2:
            out = out[:int(rng.integers(0, len(out)))]
        else:  # a header field turned huge: sizes, lengths, counts
            at = int(rng.integers(0, min(40, len(out) - 2)))
            out[at:at + 2] = b"\xff\xff"
        yield bytes(out)


@pytest.mark.parametrize("which", sorted(SEEDS))
def test_mutated_images_give_pixels_or_one_line(monkeypatch, which):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(16 << 20))
    rng = np.random.default_rng(sorted(SEEDS).index(which))
    graph = graphdef.Graph()
    with graph.as_default():
        contents = graphdef.placeholder(graphdef.string, [], name="contents")
        outs = [graphdef.raw_op(op, contents, name=f"decode_{op}", **attrs) for op, attrs in OPS]
    outcomes = {"pixels": 0, "refused": 0}
    with graphdef.Session(graph=graph) as sess:
        for data in mutations(SEEDS[which], rng, 150):
            for out in outs:
                try:
                    sess.run(out, {contents: np.array(data, dtype=object)})
                    outcomes["pixels"] += 1
                except OpError as e:
                    message = str(e)
                    assert "\n" not in message and f"'{out.op.name}'" in message, message
                    outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and outcomes["pixels"] > 0, outcomes
