"""Hostile images get one line naming the node, in TensorFlow's words where TensorFlow has words for
them: truncated files, wrong magic bytes, empty input, zero sizes, lying headers (refused against the
tensor limit before Pillow allocates a pixel), animated GIFs with too many frames, bad channels."""

import resource
import struct

import numpy as np
import pytest

import graphdef
from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError
from tests.python.images import made
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name


def _jpeg_with_size(height, width):
    data = bytearray(made.jpeg())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def _png_with_size(height, width):
    data = bytearray(made.png())
    data[16:24] = struct.pack(">II", width, height)  # the CRC is left wrong, as a forger might
    return bytes(data)


def _gif_with_size(height, width):
    data = bytearray(made.gif())
    data[6:10] = struct.pack("<HH", width, height)
    return bytes(data)


def tf_op_error(tf, op, data, **attrs):
    """TensorFlow's own message for this op on these bytes, in a TF1 graph like a serving graph's."""
    graph = tf.Graph()
    with graph.as_default():
        contents = tf.compat.v1.placeholder(tf.string, [], name="contents")
        out = getattr(tf.raw_ops, op)(contents=contents, name="decode", **attrs)
    with tf.compat.v1.Session(graph=graph) as sess:
        with pytest.raises(tf.errors.OpError) as caught:
            sess.run(out, {contents: data})
    lines = caught.value.message.splitlines()
    return next(lines[i - 1] for i, line in enumerate(lines) if "[[{{node" in line)  # the line above TF's node


def our_error(op, data, error=InvalidArgumentError, **attrs):
    graph = graphdef.Graph()
    with graph.as_default():
        contents = graphdef.placeholder(graphdef.string, [], name="contents")
        out = graphdef.raw_op(op, contents, name="decode", **attrs)
    with graphdef.Session(graph=graph) as sess:
        with pytest.raises(error) as caught:
            sess.run(out, {contents: np.array(data, dtype=object)})
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


CASES = {
    "truncated jpeg": ("DecodeJpeg", made.jpeg()[:300], {}),
    "header-only jpeg": ("DecodeJpeg", made.jpeg()[:30], {}),
    "zero-height jpeg": ("DecodeJpeg", _jpeg_with_size(0, 53), {}),
    "wrong magic": ("DecodeImage", b"hello, world", {}),
    "empty": ("DecodePng", b"", {}),
    "truncated png": ("DecodePng", made.png()[:200], {}),
    "zero-width png": ("DecodePng", _png_with_size(19, 0), {}),
    "bmp as jpeg": ("DecodeJpeg", made.bmp(), {}),
    "jpeg as bmp": ("DecodeBmp", made.jpeg(), {}),
    "truncated bmp": ("DecodeBmp", made.bmp()[:60], {}),
    "png to crop": ("DecodeAndCropJpeg", made.png(), {"crop_window": [0, 0, 1, 1]}),
    "crop outside": ("DecodeAndCropJpeg", made.jpeg(), {"crop_window": [30, 0, 10, 10]}),
    "channels 2": ("DecodeJpeg", made.jpeg(), {"channels": 2}),
    "png channels 2": ("DecodePng", made.png(), {"channels": 2}),
    "gif channels 1": ("DecodeImage", made.gif(), {"channels": 1}),
    "jpeg channels 4": ("DecodeJpeg", made.jpeg(), {"channels": 4}),
    "animated gif to jpeg": ("DecodeJpeg", made.gif(3), {}),
    "ratio 3": ("DecodeJpeg", made.jpeg(), {"ratio": 3}),
    "not a jpeg shape": ("ExtractJpegShape", made.png(), {}),
    "cmyk to grey": ("DecodeJpeg", made.cmyk_jpeg(), {"channels": 1}),
    "bmp to grey": ("DecodeImage", made.bmp(), {"channels": 1}),
    "webp channels mismatch": ("DecodeImage", made.webp(3), {"channels": 4}),
    "truncated webp": ("DecodeImage", made.webp(3)[:60], {}),
    "rgba webp as gif": ("DecodeGif", made.webp(4), {}),
    "webp to float": ("DecodeImage", made.webp(3), {"dtype": "float32"}),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_in_tensorflow_words(tf_oracle, case):
    op, data, attrs = CASES[case]
    crop = attrs.pop("crop_window", None)
    theirs = tf_op_error(tf_oracle, op, data, **attrs, **({"crop_window": crop} if crop else {}))
    ours = _ours_with_crop(op, data, crop, **attrs)
    assert ours == f"node 'decode' ({op}): {theirs}"
    if crop is not None:
        attrs["crop_window"] = crop


def _ours_with_crop(op, data, crop, **attrs):
    if crop is None:
        return our_error(op, data, **attrs)
    graph = graphdef.Graph()
    with graph.as_default():
        contents = graphdef.placeholder(graphdef.string, [], name="contents")
        out = graphdef.raw_op(op, contents, np.array(crop, np.int32), name="decode", **attrs)
    with graphdef.Session(graph=graph) as sess:
        with pytest.raises(InvalidArgumentError) as caught:
            sess.run(out, {contents: np.array(data, dtype=object)})
    return str(caught.value)


@pytest.mark.parametrize("op, data", [("DecodeJpeg", _jpeg_with_size(60000, 60000)),
                                      ("DecodePng", _png_with_size(60000, 60000)),
                                      ("DecodeImage", _gif_with_size(60000, 60000)),
                                      ("ExtractJpegShape", _jpeg_with_size(60000, 60000))],
                         ids=["jpeg", "png", "gif", "jpeg-shape"])
def test_a_header_claiming_60000_squared_is_refused_before_decoding(monkeypatch, op, data):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(64 << 20))
    if op == "ExtractJpegShape":  # reading the header alone is fine, and is all TF does
        graph = graphdef.Graph()
        with graph.as_default():
            out = graphdef.raw_op(op, np.array(data, dtype=object))
        with graphdef.Session(graph=graph) as sess:
            assert sess.run(out).tolist() == [60000, 60000, 3]
        return
    before = resource.getrusage(resource.RUSAGE_SELF)
    message = our_error(op, data, ResourceExhaustedError)
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert "'decode'" in message and "60000,60000,3] uint8" in message and "10.1 GiB" in message, message
    assert after.ru_maxrss - before.ru_maxrss < 64 << 10, "Pillow allocated the claimed image"  # KiB


@pytest.mark.parametrize("data", [made.jpeg(), made.png(), made.gif(2)], ids=["jpeg", "png", "gif"])
def test_pillows_own_bomb_limit_is_neither_applied_nor_changed(monkeypatch, data):
    """graphdef's tensor limit decides; Pillow's MAX_IMAGE_PIXELS (a process-wide setting a user may
    have chosen) is neither consulted nor touched, so decoding needs no lock around it."""
    from PIL import Image
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)
    graph = graphdef.Graph()
    with graph.as_default():
        out = graphdef.raw_op("DecodeImage", np.array(data, dtype=object), expand_animations=False)
    with graphdef.Session(graph=graph) as sess:
        assert sess.run(out).ndim == 3
    assert Image.MAX_IMAGE_PIXELS == 10


def test_the_limit_counts_the_dtype_handed_back(monkeypatch):
    """A 300x200 RGB JPEG is 180000 bytes as uint8 but 720000 as DecodeImage's float32."""
    data = made.jpeg(height=300, width=200)
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", "500000")
    message = our_error("DecodeImage", data, ResourceExhaustedError, dtype=graphdef.float32)
    assert "[300,200,3] float32 would take 703.1 KiB" in message, message
    graph = graphdef.Graph()
    with graph.as_default():
        out = graphdef.raw_op("DecodeImage", np.array(data, dtype=object))
    with graphdef.Session(graph=graph) as sess:
        assert sess.run(out).shape == (300, 200, 3)


def test_animated_gif_frames_over_the_limit_are_refused_before_decoding(monkeypatch):
    data = made.gif(frames=40)  # 40 frames of 8x9x3: 8640 bytes
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", "8000")
    message = our_error("DecodeGif", data, ResourceExhaustedError)
    assert "'decode'" in message and "[40,8,9,3] uint8" in message, message
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", "9000")
    graph = graphdef.Graph()
    with graph.as_default():
        out = graphdef.raw_op("DecodeGif", np.array(data, dtype=object))
    with graphdef.Session(graph=graph) as sess:
        assert sess.run(out).shape == (40, 8, 9, 3)


@pytest.mark.parametrize("op", ["DecodeJpeg", "DecodePng"])
def test_a_webp_through_a_3d_decoder_is_refused(op):
    """TF gives [1, h, w, c] there, against those ops' own 3-D shape; graphdef says so instead."""
    message = our_error(op, made.webp(3))
    assert message == (f"node 'decode' ({op}): {op} got a WebP image, which TensorFlow returns with a frame dim "
                       "this op's shape does not have; use decode_webp or decode_image")


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op", ["DecodeJpeg", "DecodeImage", "ExtractJpegShape"])
def test_contents_must_be_a_scalar(tf_oracle, op):
    data = np.array([made.jpeg(), made.jpeg()], dtype=object)
    graph = tf_oracle.Graph()
    with graph.as_default():
        contents = tf_oracle.compat.v1.placeholder(tf_oracle.string, None, name="contents")
        out = getattr(tf_oracle.raw_ops, op)(contents=contents, name="decode")
    with tf_oracle.compat.v1.Session(graph=graph) as sess, pytest.raises(tf_oracle.errors.OpError) as caught:
        sess.run(out, {contents: data})
    lines = caught.value.message.splitlines()
    theirs = next(lines[i - 1] for i, line in enumerate(lines) if "[[{{node" in line)
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        fed = graphdef.placeholder(graphdef.string, None, name="contents")
        ours_out = graphdef.raw_op(op, fed, name="decode")
    with graphdef.Session(graph=ours_graph) as sess, pytest.raises(InvalidArgumentError) as ours:
        sess.run(ours_out, {fed: data})
    assert str(ours.value) == f"node 'decode' ({op}): {theirs}"


def test_a_webp_through_decode_bmp_or_the_crop_is_refused():
    """TF 2.21 decodes a WebP there too, with a frame dim those ops' shapes do not have; refused here."""
    assert our_error("DecodeBmp", made.webp(3)) == (
        "node 'decode' (DecodeBmp): Trying to decode WebP format using DecodeBmp op. Use `decode_webp` or "
        "`decode_image` instead.")
    assert _ours_with_crop("DecodeAndCropJpeg", made.webp(3), [0, 0, 1, 1]) == (
        "node 'decode' (DecodeAndCropJpeg): DecodeAndCropJpeg operation can run on JPEG only, but detected WebP.")


@pytest.mark.parametrize("data", [b"\xff\x0a\xfa\x7f\x01\x90", b"\x00\x00\x00\x0cJXL \r\n\x87\n" + bytes(20)],
                         ids=["codestream", "container"])
def test_jpeg_xl_is_named_and_refused(data):
    assert our_error("DecodeImage", data) == ("node 'decode' (DecodeImage): JPEG XL images are not decoded here "
                                              "(Pillow has no JPEG XL codec); send a JPEG, PNG or WebP")


def test_a_truncated_jpeg_is_not_recovered_but_refused_in_one_line():
    """TF's libjpeg fills a short file's rows; Pillow cannot do it the same way, so it is refused."""
    message = our_error("DecodeJpeg", made.jpeg()[:400], try_recover_truncated=True)
    assert message == ("node 'decode' (DecodeJpeg): jpeg::Uncompress failed. Invalid JPEG data or crop window. "
                       "(try_recover_truncated: a truncated JPEG is not recovered here; send the whole file)")


def test_a_damaged_gif_is_one_line():
    from graphdef.ops.image_codecs_formats import _gif_blocks
    data = bytearray(made.gif(2))
    start = _gif_blocks(bytes(data))[2][0][7]  # the first frame's LZW data
    data[start + 1:start + 40] = b"\xff" * 39
    message = our_error("DecodeGif", bytes(data))
    assert message == f"node 'decode' (DecodeGif): Invalid GIF data (size {len(data)}), failed to decode: the image " \
                      "data is damaged"


def test_a_missing_pillow_is_one_line(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pillow(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_pillow)
    from graphdef.framework.errors import FailedPreconditionError
    message = our_error("DecodeJpeg", made.jpeg(), FailedPreconditionError)
    assert message == "node 'decode' (DecodeJpeg): DecodeJpeg needs Pillow: pip install graphdef[images]"
