"""Image decoding and encoding: DecodeJpeg, DecodePng, DecodeImage, DecodeGif, DecodeBmp, DecodeWebP,
DecodeAndCropJpeg, ExtractJpegShape, EncodeJpeg and EncodePng, as TensorFlow runs them.

As in TensorFlow 2, every decode op looks at the bytes, not at its name: DecodeJpeg decodes a PNG
or a GIF too, and only BMP needs DecodeBmp or DecodeImage. (A WebP, which TensorFlow hands back
with a frame dim from every op, is refused by the ops whose shape is 3-D.) Pixels come from Pillow
(an optional dependency, imported by the kernels alone), which bundles the libjpeg-turbo, zlib and
libwebp TensorFlow uses; where TensorFlow's results differ from Pillow's, the difference is worked
here (image_codecs_jpeg.py, image_codecs_formats.py, image_codecs_png16.py). Each image's size is
read from its header and checked against the tensor limit before anything is decoded. Errors are
TensorFlow's words with the node named.
"""

import inspect

import numpy as np

from graphdef.framework import dtypes, limits
from graphdef.framework.errors import FailedPreconditionError, InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import image_codecs_formats as formats
from graphdef.ops import image_codecs_jpeg as jpeg
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define
from graphdef.ops.strings import as_array, strings_like

JPEG, PNG, GIF, BMP, WEBP, JXL = "JPEG", "PNG", "GIF", "BMP", "WebP", "JPEG XL"
DCT_METHODS = ("", "INTEGER_FAST", "INTEGER_ACCURATE")
USE_OP = {JPEG: "decode_jpeg", PNG: "decode_png", GIF: "decode_gif", WEBP: "decode_webp"}


def _pillow(op_type):
    try:
        from PIL import Image
    except ImportError:
        raise FailedPreconditionError(f"{op_type} needs Pillow: pip install graphdef[images]") from None
    return Image


def _named(kernel):
    """The kernel's errors name its node and op, as TensorFlow's do."""
    def run(*args, node, **attrs):
        try:
            return kernel(*args, **attrs)
        except (InvalidArgumentError, FailedPreconditionError) as e:
            raise type(e)(f"node '{node}' ({kernel.op_type}): {e}") from None
    signature = inspect.signature(kernel)
    node = inspect.Parameter("node", inspect.Parameter.KEYWORD_ONLY)
    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), node])
    return run


def classify(data):
    """The format by its magic bytes, as TF's ClassifyFileFormat; None for anything else."""
    if data[:3] == b"\xff\xd8\xff":
        return JPEG
    if data[:8] == formats.PNG_MAGIC:
        return PNG
    if data[:4] in (b"GIF8",):
        return GIF
    if data[:2] == b"BM":
        return BMP
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    if data[:2] == b"\xff\x0a" or data[:12] == b"\x00\x00\x00\x0cJXL \r\n\x87\n":
        return JXL
    return None


def _contents(contents):
    array = as_array(contents)
    if array.ndim:
        raise InvalidArgumentError(f"`contents` must be scalar but got shape{show(array.shape)}")
    data = array[()]
    if not data:
        raise InvalidArgumentError("Input is empty.")
    return bytes(data)


def _check_channels(channels, allowed="0, 1, 3 or 4"):
    if channels not in (0, 1, 3, 4):
        raise InvalidArgumentError(f"`channels` must be {allowed} but got {channels}")


def _jpeg_flags(ratio, dct_method):
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}")
    if dct_method not in DCT_METHODS:
        raise InvalidArgumentError("dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}")


_JPEG_FAILED = "jpeg::Uncompress failed. Invalid JPEG data or crop window."


def _decode_jpeg(op_type, data, channels, out, ratio=1, fancy_upscaling=True, dct_method="", crop=None,
                 try_recover_truncated=False):
    if channels == 4:
        raise InvalidArgumentError("JPEG does not support 4 channels")
    header = jpeg.shape(data)
    if header is None or 0 in header[:2] or (channels == 1 and header[2] == 4):
        raise InvalidArgumentError(_JPEG_FAILED)  # libjpeg has no CMYK to grey either
    height, width, components = header
    out_h, out_w = -(-height // ratio), -(-width // ratio)
    depth = channels or (1 if components == 1 else 3)
    if crop is not None:
        y, x, h, w = crop
        if min(crop) < 0 or h == 0 or w == 0 or y + h > out_h or x + w > out_w:
            raise InvalidArgumentError(_JPEG_FAILED)
        out_h, out_w = h, w
    limits.check((out_h, out_w, depth), out, what="decoded image")
    pil_image = _pillow(op_type)
    try:
        array = jpeg.decode(pil_image, data, channels, ratio, fancy_upscaling, dct_method == "INTEGER_ACCURATE", crop)
    except (OSError, SyntaxError, ValueError, EOFError):
        if try_recover_truncated:
            # TF's libjpeg fills a short file's missing rows; Pillow stops at a different place, so
            # refusing beats handing on pixels TensorFlow would not give
            raise InvalidArgumentError(f"{_JPEG_FAILED} (try_recover_truncated: a truncated JPEG is not recovered "
                                       "here; send the whole file)") from None
        raise InvalidArgumentError(_JPEG_FAILED) from None
    return np.ascontiguousarray(array)


def _decode_png(op_type, data, channels, sixteen, out):
    header = formats.png_header(data)
    if header is None:
        raise InvalidArgumentError("Invalid PNG. Failed to initialize decoder.")
    height, width, _, natural = header
    limits.check((height, width, channels or natural), out, what="decoded image")
    pil_image = _pillow(op_type)
    try:
        return formats.png_decode(pil_image, data, channels, sixteen)
    except (OSError, SyntaxError, ValueError, EOFError):
        raise InvalidArgumentError(f"Invalid PNG data, size {len(data)}") from None


def _decode_gif(op_type, data, channels, animated, out):
    """[frames, height, width, 3]; a single frame's [height, width, 3] unless `animated`."""
    if channels not in (0, 3):
        raise InvalidArgumentError(f"channels must be 0 or 3 for GIF, got {channels}")
    try:
        frames, height, width = formats.gif_frames(data)
    except ValueError as e:
        raise InvalidArgumentError(f"Invalid GIF data (size {len(data)}), failed to open gif file: {e}") from None
    if not animated and frames > 1 and op_type != "DecodeImage":
        raise InvalidArgumentError(f"Got {frames} frames, but animated gifs can only be decoded by tf.io.decode_gif "
                                   "or tf.io.decode_image")
    if height == 0 or width == 0:
        raise InvalidArgumentError(f"Invalid GIF data (size {len(data)}), the screen is empty")
    limits.check((frames if animated else 1, height, width, 3), out, what="decoded image")
    pil_image = _pillow(op_type)
    try:
        array = formats.gif_decode(pil_image, data)
    except (OSError, SyntaxError, ValueError, EOFError) as e:
        raise InvalidArgumentError(f"Invalid GIF data (size {len(data)}), failed to decode: {e}") from None
    return array if animated else array[0]


def _decode_webp(op_type, data, channels, out):
    header = formats.webp_header(data)
    if header is None or 0 in header[:2]:
        raise InvalidArgumentError(f"Invalid WebP data, size {len(data)}")
    height, width, animated = header
    if animated:
        raise InvalidArgumentError("animated WebP images are not decoded here; send a still WebP, JPEG or PNG")
    limits.check((height, width, channels or 4), out, what="decoded image")
    _pillow(op_type)  # a missing Pillow is its one line, not an ImportError from the plugin
    try:
        return formats.webp_decode(data, channels)
    except ValueError as e:
        raise InvalidArgumentError(str(e)) from None
    except (OSError, SyntaxError, EOFError):
        raise InvalidArgumentError("Failed to decode WebP image.") from None


def _decode_bmp(data, channels, out):
    if channels not in (0, 3, 4):
        raise InvalidArgumentError(f"`channels` must be 0, 3 or 4 for BMP, but got {channels}")
    layout = formats.bmp_decode(data, channels)
    height, width, out_channels = layout[:3]
    limits.check((abs(height), width, out_channels), out, what="decoded image")
    return formats.bmp_pixels(data, layout)


def decode(op_type, contents, channels, *, dtype=dtypes.uint8, animated=False, **jpeg_flags):
    """What TF2's DecodeImageV2 kernel gives for `op_type`: any format by its magic bytes."""
    data = _contents(contents)
    kind = classify(data)
    if kind is None:
        raise InvalidArgumentError("Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required.")
    if kind == JXL:
        raise InvalidArgumentError("JPEG XL images are not decoded here (Pillow has no JPEG XL codec); send a JPEG, "
                                   "PNG or WebP")
    if op_type == "DecodeAndCropJpeg" and kind != JPEG:
        raise InvalidArgumentError(f"DecodeAndCropJpeg operation can run on JPEG only, but detected {kind}.")
    if op_type == "DecodeBmp" and kind != BMP:
        raise InvalidArgumentError(f"Trying to decode {kind} format using DecodeBmp op. Use `{USE_OP.get(kind, 'x')}` "
                                   "or `decode_image` instead.")
    if kind == BMP and op_type not in ("DecodeBmp", "DecodeImage"):
        raise InvalidArgumentError("Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` "
                                   f"instead. Op used: {op_type}")
    sixteen = dtype in (dtypes.uint16, dtypes.float32)
    out = dtype.np  # what the size check counts: float32 takes 4 bytes a sample
    if kind == JPEG:
        image = _decode_jpeg(op_type, data, channels, out, **jpeg_flags)
    elif kind == PNG:
        image = _decode_png(op_type, data, channels, sixteen, out)
    elif kind == GIF:
        image = _decode_gif(op_type, data, channels, animated, out)
    elif kind == WEBP:
        if op_type in ("DecodeJpeg", "DecodePng"):
            # TF hands a WebP back as [1, height, width, channels] here, against the op's own 3-D shape
            raise InvalidArgumentError(f"{op_type} got a WebP image, which TensorFlow returns with a frame dim this "
                                       "op's shape does not have; use decode_webp or decode_image")
        if dtype is not dtypes.uint8:
            raise InvalidArgumentError("WebP only supports uint8 for dtype")
        image = _decode_webp(op_type, data, channels, out)
        if op_type != "DecodeImage" or animated:
            image = image[None]  # TF gives a WebP's frames whichever op decodes it, but DecodeImage's 3-D
    else:
        image = _decode_bmp(data, channels, out)
    if op_type == "DecodeGif" and image.ndim == 3:
        image = image[None]
    return _as_dtype(image, dtype)


def _as_dtype(image, dtype):
    """TF's conversions. A PNG comes here as uint16 when asked for uint16 or float32 (libpng widens 8 bits
    times 257) and is scaled by float32(1/65535); the other formats come as uint8, widened by a shift of
    8 bits or scaled by float32(1/255)."""
    if dtype is dtypes.uint8 or image.dtype == dtypes.as_dtype(dtype).np:
        return image
    if image.dtype == np.uint16:
        return image.astype(np.float32) * np.float32(1 / 65535)
    if dtype is dtypes.uint16:
        return image.astype(np.uint16) << np.uint16(8)
    return image.astype(np.float32) * np.float32(1 / 255)


# -- the ops ----------------------------------------------------------------------------------

def _scalar_contents(ctx):
    if ctx.shape(0).ndims not in (None, 0):
        raise ctx.error(f"contents must be a scalar, got shape {show(ctx.shape(0))}")


def _image_shape(ctx, rank=3):
    _scalar_contents(ctx)
    channels = ctx.attrs.get("channels", 0)
    # a bad count is refused when run, in TF's words, as TF does
    return [TensorShape([None] * (rank - 1) + [channels if channels in (1, 3, 4) else None])]


_JPEG_ATTRS = {"channels": Attr("int", 0), "ratio": Attr("int", 1), "fancy_upscaling": Attr("bool", True),
               "try_recover_truncated": Attr("bool", False), "acceptable_fraction": Attr("float", 1.0),
               "dct_method": Attr("string", "")}


def _jpeg_kernel(op_type, contents, crop, channels, ratio, fancy_upscaling, try_recover_truncated,
                 acceptable_fraction, dct_method):
    _check_channels(channels)
    _jpeg_flags(ratio, dct_method)
    return decode(op_type, contents, channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                  dct_method=dct_method, crop=crop, try_recover_truncated=try_recover_truncated)


def _decode_jpeg_op(contents, *, channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction,
                    dct_method):
    return _jpeg_kernel("DecodeJpeg", contents, None, channels, ratio, fancy_upscaling, try_recover_truncated,
                        acceptable_fraction, dct_method)


def _decode_and_crop_jpeg(contents, crop_window, *, channels, ratio, fancy_upscaling, try_recover_truncated,
                          acceptable_fraction, dct_method):
    window = np.asarray(crop_window).reshape(-1)
    if window.size != 4:
        raise InvalidArgumentError(f"crop_size must have four elements {show(np.shape(crop_window))}")
    return _jpeg_kernel("DecodeAndCropJpeg", contents, tuple(int(v) for v in window), channels, ratio,
                        fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method)


def _decode_png_op(contents, *, channels, dtype):
    _check_channels(channels)
    return decode("DecodePng", contents, channels, dtype=dtype)


def _decode_image(contents, *, channels, dtype, expand_animations):
    _check_channels(channels)
    return decode("DecodeImage", contents, channels, dtype=dtype, animated=expand_animations)


def _decode_gif_op(contents):
    return decode("DecodeGif", contents, 3, animated=True)  # a PNG or JPEG gives one RGB frame


def _decode_bmp_op(contents, *, channels):
    if channels not in (0, 3, 4):
        raise InvalidArgumentError(f"`channels` must be 0, 3 or 4 for BMP, but got {channels}")
    return decode("DecodeBmp", contents, channels)


def _extract_jpeg_shape(contents, *, output_type):
    array = as_array(contents)
    if array.ndim:
        raise InvalidArgumentError(f"contents must be scalar, got shape {show(array.shape)}")  # TF's words here
    data = bytes(array[()])
    header = jpeg.shape(data)
    if header is None or 0 in header[:2]:
        raise InvalidArgumentError(f"Invalid JPEG data, size {len(data)}")
    height, width, components = header
    return np.array([height, width, components], dtype=output_type.np)


for _kernel, _name in ((_decode_jpeg_op, "DecodeJpeg"), (_decode_and_crop_jpeg, "DecodeAndCropJpeg"),
                       (_decode_png_op, "DecodePng"), (_decode_image, "DecodeImage"), (_decode_gif_op, "DecodeGif"),
                       (_decode_bmp_op, "DecodeBmp"), (_extract_jpeg_shape, "ExtractJpegShape")):
    _kernel.op_type = _name

DECODE_JPEG = define(
    "DecodeJpeg", "contents: string -> image: uint8",
    doc="Decodes a JPEG (or PNG or GIF, by its bytes) to [height, width, channels] uint8, as libjpeg-turbo does.",
    attrs=_JPEG_ATTRS, infer=_image_shape, kernel=_named(_decode_jpeg_op), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_crop(ctx):
    if ctx.shape(1).ndims not in (None, 1):
        raise ctx.error(f"crop_window must be a vector, got shape {show(ctx.shape(1))}")
    return _image_shape(ctx)


DECODE_AND_CROP_JPEG = define(
    "DecodeAndCropJpeg", "contents: string, crop_window: int32 -> image: uint8",
    doc="Decodes the window [y, x, height, width] of a JPEG, the pixels a full decode has there.",
    attrs=_JPEG_ATTRS, infer=_infer_crop, kernel=_named(_decode_and_crop_jpeg), grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)

DECODE_PNG = define(
    "DecodePng", "contents: string -> image: dtype",
    doc="Decodes a PNG (or JPEG or GIF, by its bytes) to [height, width, channels] uint8 or uint16.",
    attrs={"channels": Attr("int", 0), "dtype": Attr("type", dtypes.uint8, frozenset((dtypes.uint8, dtypes.uint16)))},
    infer=_image_shape, kernel=_named(_decode_png_op), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_decode_image(ctx):
    if ctx.attrs["expand_animations"]:
        _image_shape(ctx)
        return [TensorShape(None)]
    return _image_shape(ctx)


DECODE_IMAGE = define(
    "DecodeImage", "contents: string -> image: dtype",
    doc="Decodes a JPEG, PNG, GIF or BMP; an animated GIF to [frames, height, width, 3] under expand_animations.",
    attrs={"channels": Attr("int", 0), "expand_animations": Attr("bool", True),
           "dtype": Attr("type", dtypes.uint8, frozenset((dtypes.uint8, dtypes.uint16, dtypes.float32)))},
    infer=_infer_decode_image, kernel=_named(_decode_image), grad=NOT_DIFFERENTIABLE, numerics=EXACT)

DECODE_GIF = define(
    "DecodeGif", "contents: string -> image: uint8",
    doc="Decodes every frame of a GIF to [frames, height, width, 3] uint8.",
    infer=lambda ctx: _scalar_contents(ctx) or [TensorShape([None, None, None, 3])],
    kernel=_named(_decode_gif_op), grad=NOT_DIFFERENTIABLE, numerics=EXACT)

DECODE_BMP = define(
    "DecodeBmp", "contents: string -> image: uint8",
    doc="Decodes an uncompressed 8, 24 or 32-bit BMP to [height, width, channels] uint8.",
    attrs={"channels": Attr("int", 0)}, infer=_image_shape, kernel=_named(_decode_bmp_op), grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)

def _decode_webp_op(contents, *, channels, dtype):
    if channels not in (0, 3, 4):
        raise InvalidArgumentError(f"`channels` must be 0, 3 or 4 for WebP, but got {channels}")
    return decode("DecodeWebP", contents, channels, dtype=dtype)


_decode_webp_op.op_type = "DecodeWebP"
DECODE_WEBP = define(
    "DecodeWebP", "contents: string -> image: dtype",
    doc="Decodes a still WebP (or JPEG, PNG or GIF, by its bytes) to [1, height, width, 3 or 4] uint8.",
    attrs={"channels": Attr("int", 0), "dtype": Attr("type", dtypes.uint8, frozenset((dtypes.uint8,)))},
    infer=lambda ctx: _scalar_contents(ctx) or [TensorShape(None)], kernel=_named(_decode_webp_op),
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)

EXTRACT_JPEG_SHAPE = define(
    "ExtractJpegShape", "contents: string -> image_shape: output_type",
    doc="A JPEG's [height, width, components], read from its header without decoding it.",
    attrs={"output_type": Attr("type", dtypes.int32, frozenset((dtypes.int32, dtypes.int64)))},
    infer=lambda ctx: _scalar_contents(ctx) or [TensorShape([3])], kernel=_named(_extract_jpeg_shape),
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- encoding ---------------------------------------------------------------------------------

def _encodable(image, rank_message):
    image = np.asarray(image)
    if image.ndim != 3:
        raise InvalidArgumentError(rank_message + show(image.shape))
    return image


def _encode_png(image, *, compression, T):
    image = _encodable(image, "images must be at least rank 3")
    if image.shape[-1] not in (1, 2, 3, 4):
        raise InvalidArgumentError(f"image must have 1, 2, 3, or 4 channels, got {image.shape[-1]}")
    if image.size == 0:
        raise InvalidArgumentError("PNG encoding failed: the image is empty")
    out = formats.encode_png(_pillow("EncodePng"), image, compression)
    return strings_like((), [out])


def _encode_jpeg(image, *, format, quality, progressive, optimize_size, chroma_downsampling,  # noqa: A002
                 density_unit, x_density, y_density, xmp_metadata):
    image = _encodable(image, "image must be 3-dimensional")
    if image.shape[-1] not in (1, 3):
        raise InvalidArgumentError(f"image must have 1 or 3 channels, got {show(image.shape)}")
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(f"format must be '', grayscale or rgb, got {format}")
    expected = {"grayscale": 1, "rgb": 3}.get(format)
    if expected is not None and image.shape[-1] != expected:
        raise InvalidArgumentError(f"format {format} expects {expected} channels, got {show(image.shape)}")
    if density_unit not in ("in", "cm"):
        raise InvalidArgumentError(f"density_unit must be 'in' or 'cm', got {density_unit}")
    if image.size == 0:
        raise InvalidArgumentError("JPEG encoding failed: the image is empty")
    out = formats.encode_jpeg(_pillow("EncodeJpeg"), image, quality, progressive, optimize_size, chroma_downsampling,
                              density_unit, x_density, y_density, xmp_metadata)
    return strings_like((), [out])


def _infer_encode(ctx):
    if ctx.shape(0).ndims not in (None, 3):
        raise ctx.error(f"image must be 3-dimensional [height, width, channels], got shape {show(ctx.shape(0))}")
    return [TensorShape([])]


_encode_png.op_type, _encode_jpeg.op_type = "EncodePng", "EncodeJpeg"

ENCODE_PNG = define(
    "EncodePng", "image: T -> contents: string",
    doc="Encodes a [height, width, 1-4] uint8 or uint16 image as a PNG, lossless.",
    attrs={"compression": Attr("int", -1), "T": Attr("type", dtypes.uint8, frozenset((dtypes.uint8, dtypes.uint16)))},
    infer=_infer_encode, kernel=_named(_encode_png), grad=NOT_DIFFERENTIABLE, numerics=EXACT)

ENCODE_JPEG = define(
    "EncodeJpeg", "image: uint8 -> contents: string",
    doc="Encodes a [height, width, 1 or 3] uint8 image as a JPEG with libjpeg-turbo at `quality`.",
    attrs={"format": Attr("string", ""), "quality": Attr("int", 95), "progressive": Attr("bool", False),
           "optimize_size": Attr("bool", False), "chroma_downsampling": Attr("bool", True),
           "density_unit": Attr("string", "in"), "x_density": Attr("int", 300), "y_density": Attr("int", 300),
           "xmp_metadata": Attr("string", "")},
    infer=_infer_encode, kernel=_named(_encode_jpeg), grad=NOT_DIFFERENTIABLE, numerics=EXACT)
