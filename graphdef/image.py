"""tf.image (tf.compat.v1.image): resizing by TF's legacy resize ops, non-max suppression, and the image
codecs (decode_jpeg, decode_png, decode_image, encode_jpeg, encode_png, ...)."""

from graphdef.framework import dtypes as _dtypes
from graphdef.ops.image import resize_bilinear, resize_nearest_neighbor  # noqa: F401
from graphdef.ops.nms import combined_non_max_suppression, non_max_suppression  # noqa: F401
from graphdef.ops.registry import build as _build


def _op(op_type, inputs, name, **attrs):
    return _build(op_type, inputs, name=name, default_name=op_type, attrs=attrs).outputs[0]


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """DecodeJpeg: JPEG (or PNG or GIF) bytes to [height, width, channels] uint8."""
    return _op("DecodeJpeg", [contents], name, channels=channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
               try_recover_truncated=try_recover_truncated, acceptable_fraction=float(acceptable_fraction),
               dct_method=dct_method)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """DecodeAndCropJpeg: the window [y, x, height, width] of a JPEG."""
    return _op("DecodeAndCropJpeg", [contents, crop_window], name, channels=channels, ratio=ratio,
               fancy_upscaling=fancy_upscaling, try_recover_truncated=try_recover_truncated,
               acceptable_fraction=float(acceptable_fraction), dct_method=dct_method)


def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """DecodePng: PNG (or JPEG or GIF) bytes to [height, width, channels] uint8 or uint16."""
    return _op("DecodePng", [contents], name, channels=channels, dtype=_dtypes.as_dtype(dtype))


def decode_gif(contents, name=None):
    """DecodeGif: every frame, [frames, height, width, 3] uint8."""
    return _op("DecodeGif", [contents], name)


def decode_bmp(contents, channels=0, name=None):
    """DecodeBmp: an uncompressed BMP to [height, width, channels] uint8."""
    return _op("DecodeBmp", [contents], name, channels=channels)


def decode_webp(contents, channels=0, name=None):
    """DecodeWebP: a still WebP to [1, height, width, 3 or 4] uint8."""
    return _op("DecodeWebP", [contents], name, channels=channels)


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None, expand_animations=True):
    """DecodeImage: any of JPEG, PNG, GIF, BMP; uint8, uint16 or float32 in [0, 1]."""
    return _op("DecodeImage", [contents], name, channels=channels or 0, dtype=_dtypes.as_dtype(dtype),
               expand_animations=expand_animations)


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """ExtractJpegShape: [height, width, components] from the JPEG's header."""
    return _op("ExtractJpegShape", [contents], name, output_type=_dtypes.as_dtype(output_type))


def encode_png(image, compression=-1, name=None):
    """EncodePng: a [height, width, channels] image as PNG bytes."""
    return _op("EncodePng", [image], name, compression=compression)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """EncodeJpeg: a [height, width, 1 or 3] uint8 image as JPEG bytes."""
    return _op("EncodeJpeg", [image], name, format=format, quality=quality, progressive=progressive,
               optimize_size=optimize_size, chroma_downsampling=chroma_downsampling, density_unit=density_unit,
               x_density=x_density, y_density=y_density, xmp_metadata=xmp_metadata)
