"""Conformance cases for issue 34's image codecs: DecodeJpeg, DecodeAndCropJpeg, ExtractJpegShape,
DecodePng, DecodeImage, DecodeGif, DecodeBmp, DecodeWebP, EncodePng and EncodeJpeg on images held
as Consts.

The images are tiny and lossless (PNG, BMP, lossless WebP, a GIF whose palette holds every colour)
or flat JPEGs at quality 100, so the expected pixels are literals: the lossless ones give back the
pixels they were made from, and the flat JPEGs what TensorFlow 2.21 decodes them to (a flat (200, 40, 90) comes
back as (201, 40, 90) after libjpeg's YCbCr round trip). tests/python/images checks every op against
TensorFlow on noisy images. graphrun-cc has no image codecs yet: it skips them with that reason.
"""

import io

import numpy as np

import graphdef as tf
from graphdef import image

from .base import case, i32, u16

NO_CC = {"graphrun-cc": "no C++ kernel yet (issue 34, Python side first); tests/python/images asserts its "
                        "'no kernel for DecodeJpeg (DecodeJpeg)' line"}
PIXELS = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]],
                   [[7, 8, 9], [128, 128, 128], [250, 1, 99]]], np.uint8)
FLAT = (200, 40, 90)
FLAT_DECODED = np.array((201, 40, 90), np.uint8)


def _encoded(picture, fmt, **options):
    out = io.BytesIO()
    picture.save(out, fmt, **options)
    return out.getvalue()


def _images():
    from PIL import Image  # the cases' inputs only; the generator runs no kernel
    picture = Image.fromarray(PIXELS)
    palette = picture.convert("P", palette=Image.Palette.ADAPTIVE, colors=6)
    return {"png": _encoded(picture, "PNG"), "bmp": _encoded(picture, "BMP"), "gif": _encoded(palette, "GIF"),
            "webp": _encoded(picture, "WEBP", lossless=True),
            "grey_jpeg": _encoded(Image.new("L", (16, 16), 77), "JPEG", quality=100),
            "colour_jpeg": _encoded(Image.new("RGB", (16, 8), FLAT), "JPEG", quality=100)}


@case("image_decoders", "Each decode op on a tiny image held as a Const: PNG, BMP and a 6-colour GIF give back "
      "their pixels (DecodeImage's uint16 times 257), flat quality-100 JPEGs TensorFlow's pixels, a crop window, "
      "and ExtractJpegShape's [height, width, components].", skip=NO_CC)
def _():
    made = _images()
    image.decode_png(tf.constant(made["png"]), name="png")
    image.decode_image(tf.constant(made["png"]), dtype=tf.uint16, name="png16")
    image.decode_bmp(tf.constant(made["bmp"]), name="bmp")
    image.decode_gif(tf.constant(made["gif"]), name="gif")
    image.decode_webp(tf.constant(made["webp"]), name="webp")
    image.decode_jpeg(tf.constant(made["grey_jpeg"]), name="grey")
    colour = tf.constant(made["colour_jpeg"])
    image.decode_jpeg(colour, name="colour")
    image.decode_and_crop_jpeg(colour, i32(2, 3, 2, 2), name="crop")
    image.extract_jpeg_shape(colour, name="shape")
    return {}, {"png:0": PIXELS, "png16:0": PIXELS.astype(np.uint16) * u16(257), "bmp:0": PIXELS,
                "gif:0": PIXELS[None], "webp:0": PIXELS[None], "grey:0": np.full((16, 16, 1), 77, np.uint8),
                "colour:0": np.broadcast_to(FLAT_DECODED, (8, 16, 3)).copy(),
                "crop:0": np.broadcast_to(FLAT_DECODED, (2, 2, 3)).copy(), "shape:0": i32(8, 16, 3)}


@case("image_encoders", "EncodePng then DecodePng gives the pixels back; a flat image through EncodeJpeg at "
      "quality 100 and DecodeJpeg comes back as TensorFlow's own encode and decode give it.", skip=NO_CC)
def _():
    pixels = tf.placeholder(tf.uint8, [2, 3, 3], name="pixels")
    image.decode_png(image.encode_png(pixels), name="png_round_trip")
    flat = tf.constant(np.broadcast_to(np.array(FLAT, np.uint8), (8, 8, 3)).copy())
    image.decode_jpeg(image.encode_jpeg(flat, quality=100), name="jpeg_round_trip")
    return {"pixels": PIXELS}, {"png_round_trip:0": PIXELS,
                                "jpeg_round_trip:0": np.broadcast_to(FLAT_DECODED, (8, 8, 3)).copy()}
