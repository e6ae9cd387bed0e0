"""PNG, GIF and BMP decoding and JPEG/PNG encoding as TensorFlow does them, through Pillow.

Headers are read here, before any pixel is decoded, so an image whose claimed size is over the
tensor limit (graphdef.framework.limits) is refused before Pillow allocates it. Channel
conversions are TensorFlow's (libpng's): grey from RGB is (9797 R + 19234 G + 3737 B) >> 15,
alpha is dropped, or added as the PNG's largest sample (2^bit depth - 1: 15 for a 4-bit
palette), 16-bit samples to 8 bits keep the high byte and 8 to 16 bits multiply by 257. BMP is
decoded here as TensorFlow decodes it (no Pillow): BGR(A) rows, bottom-up unless the height is
negative.
"""

import io

import numpy as np

from graphdef.framework.errors import InvalidArgumentError
from graphdef.ops import image_codecs_png16 as png16

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# -- PNG ---------------------------------------------------------------------------------------

def png_header(data):
    """(height, width, bit depth, natural channels) from IHDR; None when the header is unusable."""
    if len(data) < 33 or data[12:16] != b"IHDR":
        return None
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    depth, colour = data[24], data[25]
    natural = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}.get(colour)
    if natural is None or width == 0 or height == 0 or width >= 1 << 31 or height >= 1 << 31:
        return None
    if colour == 3 and b"tRNS" in data[33:data.find(b"IDAT")]:
        natural = 4  # TF expands a palette's transparency to alpha
    return height, width, depth, natural


def png_decode(pil_image, data, channels, sixteen):
    """[height, width, channels] uint8, or uint16 when `sixteen`."""
    if png16.is_colour16(data):  # Pillow would keep only their high bytes
        array = png_channels(png16.decode(data), channels, 0xFFFF)
        return array if sixteen else (array >> 8).astype(np.uint8)
    from PIL import PngImagePlugin
    image = PngImagePlugin.PngImageFile(io.BytesIO(data))  # not Image.open: its bomb limit is not ours
    image.load()
    depth16 = image.mode.startswith("I") and data[24] == 16
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif image.mode == "1" or (image.mode.startswith("I") and not depth16):
        image = image.convert("L")
    elif image.mode == "PA":
        image = image.convert("RGBA")
    array = np.asarray(image)
    array = array.astype(np.uint16)[..., None] if depth16 else array[..., None] if array.ndim == 2 else array
    array = png_channels(array, channels, (1 << data[24]) - 1)
    if sixteen and not depth16:
        return array.astype(np.uint16) * np.uint16(257)
    if depth16 and not sixteen:
        return (array >> 8).astype(np.uint8)
    return array


def _grey(rgb):
    """libpng's png_set_rgb_to_gray(1, 0.299, 0.587): coefficients of 32768, truncated, blue the rest;
    8-bit samples are truncated, 16-bit ones rounded."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    bias = 16384 if rgb.dtype == np.uint16 else 0
    return ((9797 * r + 19234 * g + 3737 * b + bias) >> 15).astype(rgb.dtype)[..., None]


def png_channels(array, channels, filler):
    have = array.shape[-1]
    if channels == 0 or channels == have:
        return array
    colour = array[..., :3] if have >= 3 else np.repeat(array[..., :1], 3, axis=-1)
    if channels == 1:
        return _grey(colour) if have >= 3 else array[..., :1]
    if channels == 3:
        return colour
    alpha = array[..., -1:] if have in (2, 4) else np.full(array.shape[:-1] + (1,), filler, array.dtype)
    return np.concatenate([colour, alpha], axis=-1)


# -- GIF ---------------------------------------------------------------------------------------

def _skip_blocks(data, i):
    while i < len(data):
        size = data[i]
        i += 1 + size
        if size == 0:
            return i
    raise ValueError("truncated data block")


def _gif_blocks(data):
    """(height, width, frames) by walking the GIF's blocks without decoding; each frame is
    (left, top, width, height, palette, interlaced, LZW code size, offset of its data, transparent index).
    ValueError says what is wrong."""
    if len(data) < 13:
        raise ValueError("No screen descriptor detected")
    width, height, flags = int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little"), data[10]
    i, palette = _gif_palette(data, 13, flags)
    frames, transparent = [], None
    while i < len(data):
        block = data[i]
        if block == 0x3B:
            break
        if block == 0x21:
            if data[i + 1:i + 3] == b"\xf9\x04" and i + 8 <= len(data):  # graphic control extension
                transparent = data[i + 6] if data[i + 3] & 1 else None
            i = _skip_blocks(data, i + 2)
        elif block == 0x2C:
            if i + 11 > len(data):
                raise ValueError("truncated image descriptor")
            left, top, w, h = (int.from_bytes(data[i + k:i + k + 2], "little") for k in (1, 3, 5, 7))
            local = data[i + 9]
            i, local_palette = _gif_palette(data, i + 10, local)
            if i >= len(data):
                raise ValueError("truncated image data")
            frames.append((left, top, w, h, local_palette if local_palette is not None else palette,
                           bool(local & 0x40), data[i], i + 1, transparent))
            transparent = None
            i = _skip_blocks(data, i + 1)
        else:
            raise ValueError(f"unknown block 0x{block:02x}")
    if not frames:
        raise ValueError("no image in the file")
    return height, width, frames


def _gif_palette(data, i, flags):
    if not flags & 0x80:
        return i, None
    size = 3 << ((flags & 7) + 1)
    if i + size > len(data):
        raise ValueError("truncated color map")
    return i + size, np.frombuffer(data, np.uint8, size, i).reshape(-1, 3)


def gif_frames(data):
    """(frames, height, width) from the blocks alone."""
    height, width, frames = _gif_blocks(data)
    return len(frames), height, width


def _gif_raster(pil_image, data, frame):
    """One frame's colour indices, [height, width] uint8, by Pillow's LZW decoder (no palette applied)."""
    _, _, w, h, _, interlaced, bits, offset, _ = frame
    raster = pil_image.new("L", (w, h))
    decoder = pil_image._getdecoder("L", "gif", (bits, interlaced, -1))
    decoder.setimage(raster.im, (0, 0, w, h))
    consumed, status = decoder.decode(data[offset:])
    if status < 0:
        raise ValueError("the image data is damaged")
    if consumed >= 0:  # the decoder wants more than the file has
        raise ValueError("the image data is truncated")
    return np.asarray(raster)


def gif_decode(pil_image, data):
    """[frames, height, width, 3] uint8 as TF's gif_io draws them: each frame starts as a copy of the one
    before (the first as black), then its rectangle is painted but for its transparent index; disposal
    methods are not applied."""
    height, width, frames = _gif_blocks(data)
    out = np.zeros((len(frames), height, width, 3), np.uint8)
    for k, frame in enumerate(frames):
        left, top, w, h, palette, _, _, _, transparent = frame
        if k:
            out[k] = out[k - 1]
        if palette is None:
            raise ValueError("Missing color map.")
        indices = _gif_raster(pil_image, data, frame)
        rows, cols = slice(top, min(top + h, height)), slice(left, min(left + w, width))
        indices = indices[:max(0, rows.stop - top), :max(0, cols.stop - left)]
        paint = indices != transparent if transparent is not None else np.ones(indices.shape, bool)
        if np.any(indices[paint] >= len(palette)):
            bad = int(indices[paint].max())
            raise ValueError(f"Found color index {bad} outside of color map range {len(palette)}")
        region = out[k, rows, cols]
        region[paint] = palette[indices[paint]]
    return out


# -- BMP ---------------------------------------------------------------------------------------

def bmp_decode(data, channels):
    """TF's own BMP decoder: uncompressed 8, 24 or 32 bits per pixel, pixels as stored."""
    if len(data) < 30:
        raise InvalidArgumentError(f"Invalid BMP data, size {len(data)}")
    header_size = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    bpp = int.from_bytes(data[28:30], "little")
    if bpp not in (8, 24, 32):
        raise InvalidArgumentError(f"Number of channels inherent in the image must be 1, 3 or 4, was {bpp // 8}")
    if width <= 0:
        raise InvalidArgumentError(f"Width must be positive, was {width}")
    if height == 0:
        raise InvalidArgumentError("Height must not be 0")
    img_channels = bpp // 8
    out_channels = channels or img_channels
    rows = abs(height)
    row_size = (8 * img_channels * width + 31) // 32 * 4
    missing = len(data) - (header_size + row_size * rows)
    if header_size < 0 or missing < 0:
        raise InvalidArgumentError(f"Input size should match (header_size + row_size * abs_height) but they "
                                   f"differ by {missing}")
    return height, width, out_channels, img_channels, header_size, row_size


def bmp_pixels(data, layout):
    height, width, out_channels, img_channels, header_size, row_size = layout
    rows = abs(height)
    raw = np.frombuffer(data, np.uint8, rows * row_size, header_size).reshape(rows, row_size)
    pixels = raw[:, :width * img_channels].reshape(rows, width, img_channels)
    if height > 0:
        pixels = pixels[::-1]
    if img_channels >= 3:
        pixels = np.concatenate([pixels[..., 2::-1], pixels[..., 3:]], axis=-1)
    if out_channels == img_channels:
        return np.ascontiguousarray(pixels)
    colour = pixels[..., :3] if img_channels >= 3 else np.repeat(pixels, 3, axis=-1)
    if out_channels == 3:
        return np.ascontiguousarray(colour)
    alpha = pixels[..., 3:] if img_channels == 4 else np.full(colour.shape[:-1] + (1,), 255, np.uint8)
    return np.concatenate([colour, alpha], axis=-1)


# -- encoding ----------------------------------------------------------------------------------

def encode_png(pil_image, image, compression):
    channels = image.shape[-1]
    level = 6 if compression < 0 else min(compression, 9)  # zlib's default, as libpng's -1 means
    if image.dtype == np.uint16:
        return png16.encode(image, level)
    picture = pil_image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    out = io.BytesIO()
    picture.save(out, "PNG", compress_level=level)
    return out.getvalue()


def encode_jpeg(pil_image, image, quality, progressive, optimize_size, chroma_downsampling, density_unit,
                x_density, y_density, xmp_metadata):
    channels = image.shape[-1]
    picture = pil_image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    out = io.BytesIO()
    options = {"quality": min(max(quality, 1), 100), "progressive": progressive, "optimize": optimize_size,
               "subsampling": 2 if chroma_downsampling and channels == 3 else 0}  # grey: 1x1, as libjpeg sets it
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode("utf-8") if isinstance(xmp_metadata, str) else bytes(xmp_metadata)
    picture.save(out, "JPEG", **options)
    data = bytearray(out.getvalue())
    if data[6:11] == b"JFIF\x00":  # TF writes the density as given, in inches (1) or centimetres (2)
        data[13] = 2 if density_unit == "cm" else 1
        data[14:18] = (x_density & 0xFFFF).to_bytes(2, "big") + (y_density & 0xFFFF).to_bytes(2, "big")
    return bytes(data)


# -- WebP --------------------------------------------------------------------------------------

def webp_header(data):
    """(height, width, animated) from the first chunk (VP8, VP8L or VP8X), without decoding; None if unusable."""
    if len(data) < 30:
        return None
    kind = data[12:16]
    if kind == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        height = int.from_bytes(data[28:30], "little") & 0x3FFF
        return height, width, False
    if kind == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return ((bits >> 14) & 0x3FFF) + 1, (bits & 0x3FFF) + 1, False
    if kind == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return height, width, bool(data[20] & 0x02)
    return None


def webp_decode(data, channels):
    """[height, width, 3 or 4] uint8 by Pillow's libwebp, whose decode is TF's bit for bit."""
    from PIL import WebPImagePlugin
    image = WebPImagePlugin.WebPImageFile(io.BytesIO(data))  # not Image.open: its bomb limit is not ours
    have = 4 if image.mode == "RGBA" else 3
    if channels not in (0, have):
        raise ValueError("Number of channels requested does not match input")
    image.load()
    return np.asarray(image.convert("RGBA" if have == 4 else "RGB"))
