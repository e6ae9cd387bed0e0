"""Images made here for the tests: random noise and gradients, grey, RGB and RGBA, 8 and 16-bit PNG,
baseline and progressive JPEG at 4:4:4, 4:2:2 and 4:2:0, GIF and BMP, encoded by Pillow."""

import io

import numpy as np
from PIL import Image

SUBSAMPLING = {"4:4:4": 0, "4:2:2": 1, "4:2:0": 2}


def pixels(height, width, channels, seed=0, dtype=np.uint8):
    """Half noise, half a diagonal gradient: sharp edges for the chroma filters, smooth runs for the DCT."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    noise = rng.integers(0, top, size=(height, width, channels), dtype=dtype, endpoint=True)
    yy, xx = np.mgrid[0:height, 0:width]
    step = (int(top) + 1) // 256
    ramp = (((yy * 7 + xx * 3)[..., None] + np.arange(channels) * 40) * step % (int(top) + 1)).astype(dtype)
    return (noise // 2 + ramp // 2).astype(dtype)


def _mode(channels):
    return {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]


def _picture(array):
    channels = array.shape[-1]
    picture = Image.fromarray(array[..., 0] if channels == 1 else array)
    assert picture.mode == _mode(channels), picture.mode
    return picture


def encoded(picture, fmt, **options):
    out = io.BytesIO()
    picture.save(out, fmt, **options)
    return out.getvalue()


def jpeg(height=37, width=53, channels=3, subsampling="4:2:0", progressive=False, quality=90, seed=0):
    options = {"quality": quality, "progressive": progressive}
    if channels == 3:
        options["subsampling"] = SUBSAMPLING[subsampling]
    return encoded(_picture(pixels(height, width, channels, seed)), "JPEG", **options)


def png(height=19, width=23, channels=3, bits=8, seed=0):
    if bits == 16:
        assert channels == 1, "Pillow writes 16-bit PNGs in grey only"
        array = pixels(height, width, 1, seed, np.uint16)[..., 0]
        return encoded(Image.fromarray(array), "PNG")
    return encoded(_picture(pixels(height, width, channels, seed)), "PNG")


def palette_png(transparent=False, seed=0):
    picture = _picture(pixels(9, 11, 3, seed)).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    options = {"transparency": 3} if transparent else {}
    return encoded(picture, "PNG", **options)


def gif(frames=1, height=8, width=9, seed=0):
    pictures = [_picture(pixels(height, width, 3, seed + i)).convert("P", palette=Image.Palette.ADAPTIVE)
                for i in range(frames)]
    return encoded(pictures[0], "GIF", save_all=True, append_images=pictures[1:])


def bmp(channels=3, height=5, width=7, seed=0):
    return encoded(_picture(pixels(height, width, channels, seed)), "BMP")


def cmyk_jpeg(height=20, width=30, seed=0):
    """An Adobe CMYK JPEG, as print workflows write them."""
    return encoded(Image.fromarray(pixels(height, width, 4, seed), "CMYK"), "JPEG", quality=90)


def moving_gif(disposal=0, transparency=None, optimize=True, frames=4):
    """A box moving over noise: Pillow's optimizer writes the later frames as small rectangles, and a
    transparent index leaves the pixels under it to the frame before."""
    base = pixels(16, 20, 3)
    pictures = []
    for i in range(frames):
        array = base.copy()
        array[4 + i:8 + i, 5:12] = (255, 0, 0) if i % 2 else (0, 0, 255)
        pictures.append(Image.fromarray(array).convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
    options = {"save_all": True, "append_images": pictures[1:], "disposal": disposal, "optimize": optimize}
    if transparency is not None:
        options["transparency"] = transparency
    return encoded(pictures[0], "GIF", **options)


def webp(channels=3, lossless=False, seed=0):
    return encoded(_picture(pixels(21, 30, channels, seed)), "WEBP", lossless=lossless, quality=80)
