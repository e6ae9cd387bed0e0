"""Conformance cases: activations, Rsqrt and TF's integer-aware divisions."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, u8, rounded, feed, INF, NAN


# -- activations, Rsqrt and TF's integer-aware divisions --------------------------------------------

ACT_X = f32(-20, -14, -13.9, -3, -1, -0.0, 0.0, 0.5, 3, 5.9, 6, 7, 13.9, 14, 30, NAN, INF, -INF)


@case("activations", "Relu6 (clips to [0, 6]), Elu (exp(x) - 1 below 0; -0.0 stays), LeakyRelu (alpha 0.2 and "
      "0.01), Softplus (x above 13.94, exp(x) below -13.94, log1p(exp(x)) between) in float32.")
def _():
    x = feed("x", ACT_X)
    tf.nn.relu6(x, name="relu6")
    tf.nn.elu(x, name="elu")
    tf.nn.leaky_relu(x, name="leaky")
    tf.nn.leaky_relu(x, alpha=0.01, name="leaky01")
    tf.nn.softplus(x, name="softplus")
    v = ACT_X.astype(np.float64)
    with np.errstate(all="ignore"):
        threshold = np.log(np.finfo(np.float32).eps) + 2
        softplus = np.where(v > -threshold, v, np.where(v < threshold, np.exp(v), np.log1p(np.exp(v))))
        return {"x": ACT_X}, {
            "relu6:0": np.clip(ACT_X, 0, 6), "elu:0": np.where(v < 0, np.expm1(v), v).astype(np.float32),
            "leaky:0": np.where(v > 0, v, v * np.float64(np.float32(0.2))).astype(np.float32),
            "leaky01:0": np.where(v > 0, v, v * np.float64(np.float32(0.01))).astype(np.float32),
            "softplus:0": softplus.astype(np.float32)}


@case("relu6_int32_rsqrt", "Relu6 in int32, and Rsqrt in float32 and float64 (inf at 0, nan below).")
def _():
    n, x = i32(-5, 0, 3, 6, 9), f32(4, 2, 0.01, 0, -1, INF)
    tf.nn.relu6(feed("n", n), name="r6")
    tf.rsqrt(feed("x", x), name="r")
    tf.rsqrt(feed("x64", x.astype(np.float64)), name="r64")
    with np.errstate(all="ignore"):
        inv = 1 / np.sqrt(x.astype(np.float64))
    return {"n": n, "x": x, "x64": x.astype(np.float64)}, {"r6:0": i32(0, 0, 3, 6, 6), "r:0": inv.astype(np.float32),
                                                             "r64:0": inv}


DIV_A = i32(-7, 7, -7, 7, 0, 6, -6, 2147483647, -2147483648, -1)
DIV_B = i32(2, 2, -2, -2, 3, -4, 4, 3, 7, 5)


@case("floor_div_mod_int", "FloorDiv (//) rounds toward -inf, FloorMod (%) takes y's sign, Div truncates toward "
      "zero, in int32 and uint8.")
def _():
    a, b = feed("a", DIV_A), feed("b", DIV_B)
    tf.identity(a // b, name="fd")
    tf.identity(a % b, name="fm")
    tf.raw_op("Div", a, b, name="div")
    ua, ub = u8(7, 200, 0, 255), u8(2, 3, 5, 16)
    tf.floordiv(feed("ua", ua), feed("ub", ub), name="ufd")
    tf.floormod(feed("ua2", ua), feed("ub2", ub), name="ufm")
    pa, pb = [int(v) for v in DIV_A], [int(v) for v in DIV_B]
    return {"a": DIV_A, "b": DIV_B, "ua": ua, "ub": ub, "ua2": ua, "ub2": ub}, {
        "fd:0": i32(*[p // q for p, q in zip(pa, pb)]), "fm:0": i32(*[p % q for p, q in zip(pa, pb)]),
        "div:0": i32(*[int(p / q) for p, q in zip(pa, pb)]),
        "ufd:0": u8(3, 66, 0, 15), "ufm:0": u8(1, 2, 0, 15)}


@case("floor_div_mod_float", "FloorDiv of floats is floor(x / y) (1 // 0.1 = 10, where numpy says 9); FloorMod "
      "keeps the C remainder's sign when it is zero (-4 mod 2 = -0.0); Div of floats is RealDiv.")
def _():
    a = f32(-4, 4, -7, 7, -7, 7, 0, -0.0, 1, 1, -1, 0, 5.5, -2.5)
    b = f32(2, -2, 2, -2, -2, 2, -3, 3, 0.1, 0, 0, 0, INF, 0.75)
    tf.floordiv(feed("a", a), feed("b", b), name="fd")
    tf.floormod(feed("a2", a), feed("b2", b), name="fm")
    tf.raw_op("Div", feed("a3", a), feed("b3", b), name="div")
    with np.errstate(all="ignore"):
        q = a.astype(np.float64) / b
        fd = np.floor(rounded(np.divide, np.float32, a, b))
        r = np.fmod(a, b)
        fm = np.where((r != 0) & ((b < 0) != (r < 0)), r + b, r)
    return {"a": a, "b": b, "a2": a, "b2": b, "a3": a, "b3": b}, {
        "fd:0": fd.astype(np.float32), "fm:0": fm.astype(np.float32), "div:0": q.astype(np.float32)}
