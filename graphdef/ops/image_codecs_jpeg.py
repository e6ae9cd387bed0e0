"""JPEG decoding with TensorFlow's bits, from Pillow's libjpeg-turbo.

TensorFlow decodes with libjpeg-turbo: dct_method "" or INTEGER_FAST is libjpeg's JDCT_IFAST,
INTEGER_ACCURATE is JDCT_ISLOW, and fancy_upscaling picks libjpeg's triangular chroma upsampling.
Pillow drives the same library in two fixed ways: plainly (JDCT_ISLOW, fancy upsampling) and in
"draft" mode (JDCT_IFAST, no fancy upsampling), which makes three of TF's four settings exact:

- INTEGER_ACCURATE with fancy_upscaling: Pillow's plain decode.
- INTEGER_FAST without fancy_upscaling: Pillow's draft decode.
- INTEGER_FAST with fancy_upscaling (TF's default): the draft decode into YCbCr gives the IFAST
  planes, each chroma sample repeated; the chroma planes are taken back to their own size and
  upsampled and converted to RGB here with libjpeg-turbo's own integer arithmetic (jdsample.c's
  h2v1/h1v2/h2v2 fancy filters, jdcolor.c's tables), which is exact.
- INTEGER_ACCURATE without fancy_upscaling, or cropped: at 4:2:0 the ISLOW chroma samples come
  from a plain decode at scale 1/2 (libjpeg then gives chroma its full IDCT, not upsampled), and
  are upsampled here. Other subsamplings (4:2:2) are decoded with fancy upsampling, so chroma
  differs where it changes quickly; docs/guide/strings.md says so.
"""

import io

import numpy as np

_SCALE_BITS = 16
_HALF = 1 << (_SCALE_BITS - 1)


def _fix(x):
    return int(x * (1 << _SCALE_BITS) + 0.5)


def opened(data):
    """The JPEG as Pillow's plugin reads its header. Not Image.open, whose decompression-bomb limit is
    Pillow's: the size was checked against graphdef's tensor limit before any decoding."""
    from PIL import JpegImagePlugin
    return JpegImagePlugin.JpegImageFile(io.BytesIO(data))


def _open(pil_image, data, scale, draft, mode=None):
    """A Pillow JPEG set up for libjpeg's scale 1/`scale`, draft (IFAST, no fancy upsampling) or not."""
    image = opened(data)
    if mode is not None:
        image.draft(mode, None)
    image.decoderconfig = (scale, 1 if draft else 0)
    if scale > 1:
        size = ((image.size[0] + scale - 1) // scale, (image.size[1] + scale - 1) // scale)
        image._size = size  # what Pillow's own draft() sets for a scaled decode
        tile = image.tile[0]
        image.tile = [type(tile)(tile[0], (0, 0) + size, tile[2], tile[3])]
    return image


def _up_h2v1(c):
    """jdsample.c h2v1_fancy_upsample: 3/4 of the nearer sample, 1/4 of the farther; ends kept."""
    ext = np.pad(c, ((0, 0), (1, 1)), mode="edge")
    near = c * 3
    out = np.empty((c.shape[0], c.shape[1] * 2), np.int16)
    out[:, 0::2] = (near + ext[:, :-2] + 1) >> 2
    out[:, 1::2] = (near + ext[:, 2:] + 2) >> 2
    out[:, 0], out[:, -1] = c[:, 0], c[:, -1]
    return out


def _up_h1v2(c):
    """jdsample.c h1v2_fancy_upsample: the same filter down the rows, edge rows repeated."""
    ext = np.pad(c, ((1, 1), (0, 0)), mode="edge")
    near = c * 3
    out = np.empty((c.shape[0] * 2, c.shape[1]), np.int16)
    out[0::2] = (near + ext[:-2] + 1) >> 2
    out[1::2] = (near + ext[2:] + 2) >> 2
    return out


def _up_h2v2(c):
    """jdsample.c h2v2_fancy_upsample: 9/16, 3/16, 3/16, 1/16 of the four nearest samples."""
    ext = np.pad(c, ((1, 1), (0, 0)), mode="edge")
    out = np.empty((c.shape[0] * 2, c.shape[1] * 2), np.int16)
    for row, other in ((0, ext[:-2]), (1, ext[2:])):
        colsum = c * 3 + other
        side = np.pad(colsum, ((0, 0), (1, 1)), mode="edge")
        even = (colsum * 3 + side[:, :-2] + 8) >> 4
        odd = (colsum * 3 + side[:, 2:] + 7) >> 4
        even[:, 0] = (colsum[:, 0] * 4 + 8) >> 4
        odd[:, -1] = (colsum[:, -1] * 4 + 7) >> 4
        out[row::2, 0::2], out[row::2, 1::2] = even, odd
    return out


def _tables():
    """jdcolor.c's build_ycc_rgb_table: R and B offsets by Cr and Cb, and G's by both (a 256x256 table,
    as libjpeg adds its two G terms before one shift)."""
    x = np.arange(256, dtype=np.int64) - 128
    cr_r = (_fix(1.40200) * x + _HALF) >> _SCALE_BITS
    cb_b = (_fix(1.77200) * x + _HALF) >> _SCALE_BITS
    g = (-_fix(0.34414) * x[:, None] + _HALF - _fix(0.71414) * x[None, :]) >> _SCALE_BITS
    return cr_r.astype(np.int16), cb_b.astype(np.int16), g.astype(np.int16)


_CR_R, _CB_B, _G = _tables()


def _to_rgb(y, cb, cr):
    """jdcolor.c ycc_rgb_convert, table for table: [height, width, 3] uint8."""
    y = y.astype(np.int16)
    out = np.empty(y.shape + (3,), np.uint8)
    both = (cb.astype(np.intp) << 8) | cr  # a flat gather is twice as fast as a 2-D one
    for channel, offset in enumerate((_CR_R.take(cr), _G.reshape(-1).take(both), _CB_B.take(cb))):
        out[..., channel] = np.clip(y + offset, 0, 255)
    return out


def _chroma_ratio(layers, index, min_scaled):
    """(horizontal, vertical) upsampling of component `index` as jdmaster.c and jdsample.c pick it:
    chroma is first scaled up by the IDCT where the scale allows, then upsampled the rest of the way."""
    h_max, v_max = max(layer[1] for layer in layers), max(layer[2] for layer in layers)
    h, v = layers[index][1], layers[index][2]
    size = min_scaled
    while size < 8 and (h_max * min_scaled) % (h * size * 2) == 0 and (v_max * min_scaled) % (v * size * 2) == 0:
        size *= 2
    h_in, v_in = h * size // min_scaled, v * size // min_scaled
    return h_max // h_in, v_max // v_in, h * size, h_max


def _islow_planes(pil_image, data):
    """A 4:2:0 JPEG's ISLOW planes as the draft decode lays out IFAST ones (each chroma sample repeated
    2x2): luma from a plain grey decode, chroma from a plain decode at scale 1/2, where libjpeg gives
    chroma its full 8x8 IDCT and so its own samples, unscaled and not upsampled."""
    luma = np.asarray(_open(pil_image, data, 1, draft=False, mode="L"))
    half = np.asarray(_open(pil_image, data, 2, draft=False, mode="YCbCr"))
    chroma = half[..., 1:].repeat(2, axis=0).repeat(2, axis=1)[:luma.shape[0], :luma.shape[1]]
    return np.concatenate([luma[..., None], chroma], axis=-1)


def _is_420(layers):
    return [(layer[1], layer[2]) for layer in layers] == [(2, 2), (1, 1), (1, 1)]


def _fancy_ifast(pil_image, data, scale, crop=None, accurate=False, fancy_upscaling=True):
    """TF's default decode (IFAST, fancy upsampling) of a colour JPEG whose chroma is subsampled, or
    with `accurate` (4:2:0 at scale 1 only) its INTEGER_ACCURATE decode, fancy or not.

    A crop is what libjpeg-turbo's jpeg_crop_scanline decodes: the columns from the window's left
    edge rounded down to an iMCU, whose ends the upsampler takes for the image's own edges."""
    image = _open(pil_image, data, scale, draft=True, mode="YCbCr")
    full_width = opened(data).size[0]
    planes = _islow_planes(pil_image, data) if accurate else np.asarray(image)
    layers = image.layer
    height, width = planes.shape[:2]
    top, left, rows, columns = crop if crop is not None else (0, 0, height, width)
    min_scaled = 8 // scale
    align = min_scaled * max(layer[1] for layer in layers)
    start = left // align * align
    span = left + columns - start
    luma = planes[top:top + rows, left:left + columns, 0]
    chroma = []
    for k in (1, 2):
        h_ratio, v_ratio, h_scaled, h_max = _chroma_ratio(layers, k, min_scaled)
        down_width = -(-full_width * h_scaled // (h_max * 8))
        plane = planes[:, start:start + span, k].astype(np.int16)
        fancy = fancy_upscaling and min_scaled > 1  # libjpeg upsamples 1/8 scale decodes plainly
        if fancy and (h_ratio, v_ratio) == (2, 2) and down_width > 2:
            plane = _up_h2v2(plane[::2, ::2])
        elif fancy and (h_ratio, v_ratio) == (2, 1) and down_width > 2:
            plane = _up_h2v1(plane[:, ::2])
        elif fancy and (h_ratio, v_ratio) == (1, 2):
            plane = _up_h1v2(plane[::2])
        chroma.append(plane[top:top + rows, left - start:left - start + columns].astype(np.uint8))
    return _to_rgb(luma, *chroma)


def subsampled_colour(image):
    """Whether a 3-component JPEG's chroma is smaller than its luma (then upsampling matters)."""
    layers = getattr(image, "layer", None) or []
    return image.mode == "RGB" and len(layers) == 3 and len({(layer[1], layer[2]) for layer in layers}) > 1


def decode(pil_image, data, channels, ratio, fancy_upscaling, accurate, crop=None):
    """The JPEG's pixels as TF's DecodeJpeg gives them: [height, width, channels] uint8, or the window
    crop = (y, x, height, width) of them as DecodeAndCropJpeg gives it."""
    header = opened(data)
    grey_out = channels == 1 or (channels == 0 and header.mode == "L")
    if header.mode == "CMYK":
        array = _cmyk(pil_image, data, ratio, accurate)  # grey was refused: libjpeg has none
    elif grey_out:
        # libjpeg's JCS_GRAYSCALE output is the Y plane, never upsampled
        image = _open(pil_image, data, ratio, draft=not accurate, mode="L")
        array = np.asarray(image.convert("L") if image.mode != "L" else image)
    elif subsampled_colour(header) and fancy_upscaling and not accurate:
        return _channels(_fancy_ifast(pil_image, data, ratio, crop), channels)
    elif (subsampled_colour(header) and accurate and ratio == 1 and _is_420(header.layer)
          and (crop is not None or not fancy_upscaling)):
        return _channels(_fancy_ifast(pil_image, data, 1, crop, True, fancy_upscaling), channels)
    else:
        # without subsampled chroma fancy upsampling does nothing; INTEGER_ACCURATE without it is
        # not to be had from Pillow but at 4:2:0, and is decoded with it (see the module's doc)
        image = _open(pil_image, data, ratio, draft=not accurate)
        array = np.asarray(image.convert("RGB") if image.mode != "RGB" else image)
    if array.ndim == 2:
        array = array[..., None]
    if crop is not None:
        y, x, h, w = crop
        array = array[y:y + h, x:x + w]
    return _channels(array, channels)


def _cmyk(pil_image, data, ratio, accurate):
    """An Adobe CMYK JPEG as TF turns it into RGB: each of C, M, Y times K over 255 (inverted CMYK)."""
    image = _open(pil_image, data, ratio, draft=not accurate)
    cmyk = 255 - np.asarray(image).astype(np.int32)  # Pillow un-inverts Adobe's CMYK; TF reads it raw
    return (cmyk[..., 3:4] * cmyk[..., :3] // 255).astype(np.uint8)


def _channels(array, channels):
    if channels in (0, array.shape[-1]):
        return array
    if channels == 3 and array.shape[-1] == 1:
        return np.repeat(array, 3, axis=-1)
    if channels == 4:
        rgb = array if array.shape[-1] == 3 else np.repeat(array, 3, axis=-1)
        return np.concatenate([rgb, np.full(rgb.shape[:-1] + (1,), 255, np.uint8)], axis=-1)
    return array


def shape(data):
    """(height, width, components) from a JPEG's frame header, without decoding; None if it has none."""
    i = 2
    if data[:2] != b"\xff\xd8":
        return None
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 10 > len(data):
                return None
            height = int.from_bytes(data[i + 5:i + 7], "big")
            width = int.from_bytes(data[i + 7:i + 9], "big")
            return height, width, data[i + 9]
        if marker in (0xD9, 0xDA) or length < 2:
            return None
        i += 2 + length
    return None
