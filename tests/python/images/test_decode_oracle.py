"""Images decoded by graphs TensorFlow made, run by TensorFlow and by graphdef's Session: the pixels
must be TensorFlow's bit for bit (decode results are exact under the numerics policy), for every
JPEG setting TensorFlow has, except INTEGER_ACCURATE without fancy upscaling (checked apart)."""

import numpy as np
import pytest

from tests.python.images import made
from tests.python.strings.oracle import run_tf_graph_in_both
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle


def decoded_in_both(tf, decode, data):
    """decode(tf, placeholder) in a TF graph, run by both on `data`; returns ours."""
    def build(tf):
        contents = tf.compat.v1.placeholder(tf.string, [], name="contents")
        return [decode(tf, contents)]
    (ours,) = run_tf_graph_in_both(tf, build, {"contents": np.array(data, dtype=object)})
    return ours


JPEGS = [dict(channels=c, subsampling=s, progressive=p, height=h, width=w)
         for c, s in ((3, "4:2:0"), (3, "4:2:2"), (3, "4:4:4"), (1, "4:4:4"))
         for p in (False, True) for h, w in ((37, 53), (16, 16), (2, 3), (1, 1), (9, 70))]


@pytest.mark.parametrize("ratio", [1, 2, 4, 8])
@pytest.mark.parametrize("made_as", JPEGS, ids=lambda m: "-".join(map(str, m.values())))
def test_decode_jpeg_default_flags(tf_oracle, made_as, ratio):
    data = made.jpeg(**made_as)
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, ratio=ratio), data)
    assert ours.shape == (-(-made_as["height"] // ratio), -(-made_as["width"] // ratio), made_as["channels"])


@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("fast, fancy", [("INTEGER_FAST", False), ("INTEGER_ACCURATE", True), ("", True)])
@pytest.mark.parametrize("subsampling", ["4:2:0", "4:2:2", "4:4:4"])
def test_decode_jpeg_flags(tf_oracle, channels, fast, fancy, subsampling):
    data = made.jpeg(subsampling=subsampling, progressive=subsampling == "4:2:2")
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, channels=channels, dct_method=fast,
                                                               fancy_upscaling=fancy), data)


def test_grey_jpeg_to_rgb(tf_oracle):
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, channels=3), made.jpeg(channels=1))


@pytest.mark.parametrize("made_as", [dict(height=37, width=53), dict(height=2, width=3), dict(height=64, width=80),
                                     dict(height=9, width=70, progressive=True)], ids=lambda m: str(m))
def test_accurate_without_fancy_upscaling_at_420(tf_oracle, made_as):
    """ISLOW chroma at 4:2:0 comes from a scale-1/2 decode, where libjpeg gives chroma its full IDCT."""
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, dct_method="INTEGER_ACCURATE",
                                                               fancy_upscaling=False), made.jpeg(**made_as))


def test_accurate_without_fancy_upscaling_at_422_differs_only_in_chroma(tf_oracle):
    """The one setting Pillow cannot give: luma (grey output) is exact, colour close but not equal."""
    import graphdef
    from graphdef import image
    data = made.jpeg(subsampling="4:2:2")
    flags = dict(dct_method="INTEGER_ACCURATE", fancy_upscaling=False)
    graph = graphdef.Graph()
    with graph.as_default():
        colour, grey = image.decode_jpeg(data, **flags), image.decode_jpeg(data, channels=1, **flags)
    with graphdef.Session(graph=graph) as sess:
        ours_colour, ours_grey = sess.run([colour, grey])
    assert np.array_equal(ours_grey, tf_oracle.io.decode_jpeg(data, channels=1, **flags).numpy())
    difference = np.abs(ours_colour.astype(int) - tf_oracle.io.decode_jpeg(data, **flags).numpy())
    assert 0 < difference.max() < 64, difference.max()


@pytest.mark.parametrize("window", [[0, 0, 37, 53], [3, 5, 10, 20], [17, 31, 20, 22], [16, 0, 21, 3]])
def test_decode_and_crop_jpeg_accurate_at_420(tf_oracle, window):
    decoded_in_both(tf_oracle, lambda tf, c: tf.image.decode_and_crop_jpeg(c, window, dct_method="INTEGER_ACCURATE"),
                    made.jpeg(progressive=True))


@pytest.mark.parametrize("window", [[0, 0, 37, 53], [3, 5, 10, 20], [36, 52, 1, 1], [8, 16, 16, 16],
                                    [17, 31, 20, 22], [0, 1, 2, 2], [16, 0, 21, 3]])
@pytest.mark.parametrize("subsampling", ["4:2:0", "4:2:2", "4:4:4"])
def test_decode_and_crop_jpeg(tf_oracle, window, subsampling):
    data = made.jpeg(subsampling=subsampling, progressive=subsampling == "4:2:2")
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.image.decode_and_crop_jpeg(c, window), data)
    assert ours.shape == (window[2], window[3], 3)


@pytest.mark.parametrize("flags", [dict(ratio=2), dict(ratio=4, channels=1), dict(dct_method="INTEGER_FAST",
                                                                                    fancy_upscaling=False)])
def test_decode_and_crop_jpeg_flags(tf_oracle, flags):
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.image.decode_and_crop_jpeg(c, [1, 3, 5, 6], **flags),
                           made.jpeg(height=64, width=80))
    assert ours.shape[:2] == (5, 6)


@pytest.mark.parametrize("output_type", ["int32", "int64"])
def test_extract_jpeg_shape(tf_oracle, output_type):
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.io.extract_jpeg_shape(c, output_type=getattr(tf, output_type)),
                           made.jpeg(height=300, width=7, progressive=True))
    assert ours.tolist() == [300, 7, 3]


PNGS = {"grey": made.png(channels=1), "grey-alpha": made.png(channels=2), "rgb": made.png(channels=3),
        "rgba": made.png(channels=4), "grey16": made.png(channels=1, bits=16), "palette": made.palette_png(),
        "palette-trns": made.palette_png(transparent=True)}


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("which", sorted(PNGS))
def test_decode_png(tf_oracle, which, channels, dtype):
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_png(c, channels=channels, dtype=getattr(tf, dtype)),
                    PNGS[which])


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("data", [made.jpeg(), made.png(channels=4), made.png(channels=1, bits=16), made.gif(3),
                                  made.bmp(4)], ids=["jpeg", "png", "png16", "gif", "bmp"])
@pytest.mark.parametrize("expand", [True, False])
def test_decode_image(tf_oracle, data, dtype, expand):
    decoded_in_both(tf_oracle, lambda tf, c: tf.raw_ops.DecodeImage(contents=c, dtype=getattr(tf, dtype),
                                                                     expand_animations=expand), data)


@pytest.mark.parametrize("frames", [1, 2, 5])
def test_decode_gif(tf_oracle, frames):
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_gif(c), made.gif(frames))
    assert ours.shape == (frames, 8, 9, 3)


@pytest.mark.parametrize("data", [made.png(), made.png(channels=4), made.png(channels=1), made.jpeg(), made.gif()],
                         ids=["png", "png-rgba", "png-grey", "jpeg", "gif"])
def test_any_decoder_reads_any_format_but_bmp(tf_oracle, data):
    for op in ("DecodeJpeg", "DecodePng", "DecodeGif"):
        decoded_in_both(tf_oracle, lambda tf, c: getattr(tf.raw_ops, op)(contents=c), data)


@pytest.mark.parametrize("channels", [0, 3, 4])
@pytest.mark.parametrize("bmp_channels", [1, 3, 4])
def test_decode_bmp(tf_oracle, bmp_channels, channels):
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_bmp(c, channels=channels), made.bmp(bmp_channels))


@pytest.mark.parametrize("channels", [0, 3])
def test_cmyk_jpeg(tf_oracle, channels):
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, channels=channels), made.cmyk_jpeg())
    assert ours.shape == (20, 30, 3)


def test_try_recover_truncated_on_a_whole_file(tf_oracle):
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, try_recover_truncated=True,
                                                               acceptable_fraction=0.5), made.jpeg(progressive=True))


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("transparency", [None, 0])
@pytest.mark.parametrize("disposal", [0, 1, 2, 3])
def test_decode_gif_sub_frames_transparency_and_disposal(tf_oracle, disposal, transparency, optimize):
    """TF draws each frame over a copy of the one before and ignores disposal; so must we."""
    ours = decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_gif(c),
                           made.moving_gif(disposal, transparency, optimize))
    assert ours.shape == (4, 16, 20, 3)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("samples", [2, 3, 4])
def test_decode_16_bit_colour_png(tf_oracle, samples, channels, dtype):
    """Pillow cannot write these, so TensorFlow's EncodePng does (libpng's adaptive filters: every
    filter type but None appears); Pillow would read only their high bytes, so they are unfiltered here."""
    data = tf_oracle.io.encode_png(made.pixels(19, 23, samples, seed=samples, dtype=np.uint16)).numpy()
    decoded_in_both(tf_oracle, lambda tf, c: tf.raw_ops.DecodeImage(contents=c, channels=channels,
                                                                     dtype=getattr(tf, dtype)), data)


@pytest.mark.parametrize("ratio", [2, 4, 8])
@pytest.mark.parametrize("method, fancy", [("INTEGER_ACCURATE", True), ("INTEGER_FAST", False)])
@pytest.mark.parametrize("subsampling", ["4:2:0", "4:2:2"])
def test_decode_jpeg_scaled_with_other_flags(tf_oracle, ratio, method, fancy, subsampling):
    decoded_in_both(tf_oracle, lambda tf, c: tf.io.decode_jpeg(c, ratio=ratio, dct_method=method,
                                                               fancy_upscaling=fancy),
                    made.jpeg(height=61, width=45, subsampling=subsampling))


WEBPS = {"lossy-rgb": made.webp(3), "lossy-rgba": made.webp(4), "lossless-rgb": made.webp(3, lossless=True),
         "lossless-rgba": made.webp(4, lossless=True)}


@pytest.mark.parametrize("op, which", [("DecodeWebP", w) for w in sorted(WEBPS)]
                         + [("DecodeGif", w) for w in sorted(WEBPS) if w.endswith("rgb")])
def test_decode_webp(tf_oracle, which, op):
    """libwebp's decode is Pillow's and TF's alike, with a frame dim. DecodeGif asks for RGB, so TF
    refuses an RGBA WebP there (test_hostile_images checks that line)."""
    ours = decoded_in_both(tf_oracle, lambda tf, c: getattr(tf.raw_ops, op)(contents=c), WEBPS[which])
    assert ours.shape[:3] == (1, 21, 30)


@pytest.mark.parametrize("channels", [0, 3, 4])
@pytest.mark.parametrize("expand", [True, False])
def test_decode_image_webp(tf_oracle, channels, expand):
    data = WEBPS["lossy-rgba" if channels == 4 else "lossless-rgb"]
    decoded_in_both(tf_oracle, lambda tf, c: tf.raw_ops.DecodeImage(contents=c, channels=channels,
                                                                     expand_animations=expand), data)
