"""EncodePng and EncodeJpeg in graphs TensorFlow made: a JPEG is TensorFlow's own bytes (the same
libjpeg-turbo, settings and JFIF/XMP headers); a PNG's bytes are zlib's and the filters' choice, so
what is held equal is what TensorFlow decodes it to, which is lossless."""

import numpy as np
import pytest

import graphdef
from graphdef import image
from graphdef.framework.errors import InvalidArgumentError
from tests.python.images import made
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle


def both(tf, encode, pixels):
    """encode(tf, placeholder) in a TF graph, run by TF and by graphdef; (our bytes, TF's bytes)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.as_dtype(pixels.dtype), [None, None, pixels.shape[-1]], name="pixels")
        out = encode(tf, x)
    with tf.compat.v1.Session(graph=graph) as sess:
        theirs = sess.run(out, {x: pixels})
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        graphdef.import_graph_def(graph.as_graph_def(), name="")
    with graphdef.Session(graph=ours_graph) as sess:
        ours = sess.run(out.name, {"pixels:0": pixels})
    assert isinstance(ours, bytes) or isinstance(np.asarray(ours)[()], bytes)
    return bytes(np.asarray(ours, dtype=object)[()]), theirs


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("compression", [-1, 0, 9])
def test_encode_png_is_lossless_as_tensorflow_reads_it(tf_oracle, channels, compression):
    pixels = made.pixels(13, 17, channels)
    ours, _ = both(tf_oracle, lambda tf, x: tf.io.encode_png(x, compression=compression), pixels)
    assert np.array_equal(tf_oracle.io.decode_png(ours).numpy(), pixels)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_encode_png_16_bits(tf_oracle, channels):
    pixels = made.pixels(5, 6, channels, dtype=np.uint16)
    ours, _ = both(tf_oracle, lambda tf, x: tf.io.encode_png(x), pixels)
    assert np.array_equal(tf_oracle.io.decode_png(ours, dtype=tf_oracle.uint16).numpy(), pixels)


@pytest.mark.parametrize("options", [{}, {"quality": 50}, {"quality": 100, "chroma_downsampling": False},
                                     {"progressive": True}, {"optimize_size": True, "quality": 75},
                                     {"xmp_metadata": "<x:xmpmeta>caf\u00e9</x:xmpmeta>"},
                                     {"density_unit": "cm", "x_density": 10, "y_density": 20}],
                         ids=["default", "q50", "q100-444", "progressive", "optimized", "xmp", "density-cm"])
@pytest.mark.parametrize("channels", [1, 3])
def test_encode_jpeg_gives_tensorflows_bytes(tf_oracle, options, channels):
    """The same libjpeg-turbo with the same settings: the very bytes TensorFlow's EncodeJpeg writes."""
    pixels = made.pixels(37, 53, channels)
    ours, theirs = both(tf_oracle, lambda tf, x: tf.io.encode_jpeg(x, **options), pixels)
    assert ours == theirs
    assert (b"\xff\xc2" in ours) == bool(options.get("progressive"))


@pytest.mark.parametrize("format_, channels, words", [("grayscale", 3, "format grayscale expects 1 channels, got "
                                                                       "[2,2,3]"),
                                                      ("rgb", 1, "format rgb expects 3 channels, got [2,2,1]")])
def test_encode_jpeg_format_must_match_the_channels(format_, channels, words):
    with graphdef.Graph().as_default():
        out = image.encode_jpeg(np.zeros((2, 2, channels), np.uint8), format=format_, name="encode")
        with graphdef.Session() as sess, pytest.raises(InvalidArgumentError) as caught:
            sess.run(out)
    assert str(caught.value) == f"node 'encode' (EncodeJpeg): {words}"


@pytest.mark.parametrize("pixels, words", [(np.zeros((2, 2, 5), np.uint8), "image must have 1, 2, 3, or 4 channels, "
                                                                           "got 5")])
def test_encode_png_refusals(pixels, words):
    with graphdef.Graph().as_default():
        out = image.encode_png(pixels, name="encode")
        with graphdef.Session() as sess, pytest.raises(InvalidArgumentError) as caught:
            sess.run(out)
    assert str(caught.value) == f"node 'encode' (EncodePng): {words}"


def test_encode_jpeg_refuses_four_channels():
    with graphdef.Graph().as_default():
        out = image.encode_jpeg(np.zeros((2, 2, 4), np.uint8), name="encode")
        with graphdef.Session() as sess, pytest.raises(InvalidArgumentError) as caught:
            sess.run(out)
    assert str(caught.value) == "node 'encode' (EncodeJpeg): image must have 1 or 3 channels, got [2,2,4]"
