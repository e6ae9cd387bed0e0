"""Conformance cases: ResizeNearestNeighbor and ResizeBilinear under each coordinate rule.

The references compute TF's coordinates in float64 from its definitions (they are exact at these
sizes: every scale is a multiple of 1/4 or 1/8) and interpolate in float64, rounded once.
"""

import math

import numpy as np

import graphdef as tf

from .base import case, feed, i32

X = (np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2) % 7 - 3) * np.float32(0.5)
RULES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)


def _coord(i, in_size, out_size, align, half, bilinear):
    scale = (in_size - 1) / (out_size - 1) if align and out_size > 1 else in_size / out_size
    if half:
        return (i + 0.5) * scale - (0.5 if bilinear else 0.0)
    return i * scale


def _nearest_ref(x, h, w, align, half):
    def index(i, n, m):
        c = _coord(i, n, m, align, half, False)
        at = math.floor(c + 0.5) if align else math.floor(c)
        return max(min(at, n - 1), 0)
    rows = [index(i, x.shape[1], h) for i in range(h)]
    cols = [index(j, x.shape[2], w) for j in range(w)]
    return x[:, rows][:, :, cols]


def _bilinear_ref(x, h, w, align, half):
    x = x.astype(np.float64)
    out = np.zeros((x.shape[0], h, w, x.shape[3]))
    for i in range(h):
        cy = _coord(i, x.shape[1], h, align, half, True)
        y0, y1, dy = max(math.floor(cy), 0), min(math.ceil(cy), x.shape[1] - 1), cy - math.floor(cy)
        for j in range(w):
            cx = _coord(j, x.shape[2], w, align, half, True)
            x0, x1, dx = max(math.floor(cx), 0), min(math.ceil(cx), x.shape[2] - 1), cx - math.floor(cx)
            top = x[:, y0, x0] * (1 - dx) + x[:, y0, x1] * dx
            bottom = x[:, y1, x0] * (1 - dx) + x[:, y1, x1] * dx
            out[:, i, j] = top * (1 - dy) + bottom * dy
    return out.astype(np.float32)


for _align, _half in RULES:
    _flags = "".join(s for s, on in (("_align_corners", _align), ("_half_pixel", _half)) if on) or "_legacy"

    def _resize(align=_align, half=_half):
        x = feed("x", X)
        tf.image.resize_nearest_neighbor(x, i32(5, 8), align_corners=align, half_pixel_centers=half, name="up")
        tf.image.resize_nearest_neighbor(x, i32(2, 3), align_corners=align, half_pixel_centers=half, name="down")
        tf.image.resize_bilinear(x, i32(5, 8), align_corners=align, half_pixel_centers=half, name="bl_up")
        tf.image.resize_bilinear(x, i32(2, 3), align_corners=align, half_pixel_centers=half, name="bl_down")
        return {"x": X}, {"up:0": _nearest_ref(X, 5, 8, align, half), "down:0": _nearest_ref(X, 2, 3, align, half),
                          "bl_up:0": _bilinear_ref(X, 5, 8, align, half),
                          "bl_down:0": _bilinear_ref(X, 2, 3, align, half)}
    case(f"resize{_flags}", f"ResizeNearestNeighbor and ResizeBilinear of [2,3,4,2] to [5,8] and [2,3] with "
         f"align_corners={_align}, half_pixel_centers={_half}.")(_resize)


@case("resize_uint8_to_one_pixel", "ResizeBilinear of uint8 images gives float32; a [1,1] output under "
      "align_corners reads pixel (0, 0); nearest keeps uint8.")
def _():
    x = np.arange(18, dtype=np.uint8).reshape(1, 3, 3, 2) * 13
    images = feed("x", x)
    tf.image.resize_bilinear(images, i32(1, 1), align_corners=True, name="bl")
    tf.image.resize_nearest_neighbor(images, i32(4, 2), name="nn")
    return {"x": x}, {"bl:0": x[:, :1, :1].astype(np.float32), "nn:0": _nearest_ref(x, 4, 2, False, False)}


def _bilinear_grad_ref(g, h, w, align, half):
    """Each gradient pixel times its four float64 weights, added to the pixels ResizeBilinear read."""
    out = np.zeros((g.shape[0], h, w, g.shape[3]))
    for i in range(g.shape[1]):
        cy = _coord(i, h, g.shape[1], align, half, True)
        y0, y1, dy = max(math.floor(cy), 0), min(math.ceil(cy), h - 1), cy - math.floor(cy)
        for j in range(g.shape[2]):
            cx = _coord(j, w, g.shape[2], align, half, True)
            x0, x1, dx = max(math.floor(cx), 0), min(math.ceil(cx), w - 1), cx - math.floor(cx)
            for r, c, weight in ((y0, x0, (1 - dy) * (1 - dx)), (y0, x1, (1 - dy) * dx), (y1, x0, dy * (1 - dx)),
                                 (y1, x1, dy * dx)):
                out[:, r, c] += g[:, i, j] * weight
    return out.astype(np.float32)


def _nearest_grad_ref(g, h, w, align, half):
    """Each gradient pixel added to the one pixel ResizeNearestNeighbor copied it from."""
    def index(i, n, m):
        c = _coord(i, n, m, align, half, False)
        return max(min(math.floor(c + 0.5) if align else math.floor(c), n - 1), 0)
    out = np.zeros((g.shape[0], h, w, g.shape[3]))
    for i in range(g.shape[1]):
        for j in range(g.shape[2]):
            out[:, index(i, h, g.shape[1]), index(j, w, g.shape[2])] += g[:, i, j]
    return out.astype(g.dtype)


G = (np.arange(2 * 5 * 8 * 2, dtype=np.float32).reshape(2, 5, 8, 2) % 9 - 4) * np.float32(0.25)
G_DOWN = G[:, :2, :3]

for _align, _half in RULES:
    _flags = "".join(s for s, on in (("_align_corners", _align), ("_half_pixel", _half)) if on) or "_legacy"

    def _resize_grads(align=_align, half=_half):
        g, g_down = feed("g", G), feed("g_down", G_DOWN)
        image = tf.constant(X, name="image")
        flags = {"align_corners": align, "half_pixel_centers": half}
        tf.raw_op("ResizeBilinearGrad", g, image, name="bl_up", **flags)
        tf.raw_op("ResizeBilinearGrad", g_down, image, name="bl_down", **flags)
        tf.raw_op("ResizeNearestNeighborGrad", g, i32(3, 4), name="up", **flags)
        tf.raw_op("ResizeNearestNeighborGrad", g_down, i32(3, 4), name="down", **flags)
        return {"g": G, "g_down": G_DOWN}, {
            "bl_up:0": _bilinear_grad_ref(G, 3, 4, align, half),
            "bl_down:0": _bilinear_grad_ref(G_DOWN, 3, 4, align, half),
            "up:0": _nearest_grad_ref(G, 3, 4, align, half), "down:0": _nearest_grad_ref(G_DOWN, 3, 4, align, half)}
    case(f"resize_grads{_flags}", f"ResizeBilinearGrad and ResizeNearestNeighborGrad of [2,5,8,2] and [2,2,3,2] "
         f"gradients back to [2,3,4,2] images with align_corners={_align}, half_pixel_centers={_half}.")(_resize_grads)
