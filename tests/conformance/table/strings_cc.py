"""Conformance cases for the string ops graphrun-cc has kernels for (issue 34): StringLength and
StringToNumber on string constants, hostile bytes among them. Expected values are literals worked by
hand; tests/cc/strings checks the same ops against graphrun and against TensorFlow."""

import numpy as np

import graphdef as tf

from .base import case, f32, f64, i32, i64


@case("string_length_and_to_number", "StringLength in bytes and in UTF-8 characters (invalid UTF-8, a NUL, "
      "an emoji); StringToNumber of decimal text, with whitespace, signs, exponents and inf, to float32 (16777217 "
      "rounds), float64, int32 and int64 (both extremes).")
def _():
    words = tf.constant([b"", b"abc", "\u00e9t\u00e9".encode(), b"\xff\xfe\x80", b"a\x00b", "\U0001f600".encode()],
                        name="words")
    tf.identity(tf.strings.length(words), name="bytes")
    tf.identity(tf.strings.length(words, unit="UTF8_CHAR"), name="chars")
    tf.identity(tf.strings.to_number(tf.constant([b"1e3", b".5", b"-inf", b"16777217"]), tf.float32), name="f32")
    tf.identity(tf.strings.to_number(tf.constant([b"0.1", b"-2.5e-3"]), tf.float64), name="f64")
    tf.identity(tf.strings.to_number(tf.constant([b" 12 ", b"-7", b"+3", b"0"]), tf.int32), name="i32")
    tf.identity(tf.strings.to_number(tf.constant([b"-9223372036854775808", b"9223372036854775807"]), tf.int64),
                name="i64")
    return {}, {
        "bytes:0": i32(0, 3, 5, 3, 3, 4), "chars:0": i32(0, 3, 3, 2, 3, 1),
        "f32:0": f32(1000.0, 0.5, -np.inf, 16777216.0), "f64:0": f64(0.1, -0.0025),
        "i32:0": i32(12, -7, 3, 0), "i64:0": i64(-2**63, 2**63 - 1)}



@case("substr_bytes_and_chars", "Substr in bytes and in UTF-8 characters: from the start, from the end, a "
      "negative length (to the end, in bytes; empty, in characters), a length past the end; pos and len "
      "broadcast against a [2, 3] text. The pieces are measured (StringLength) and, for digits, read back "
      "(StringToNumber), as a case holds numbers only.")
def _():
    text = tf.constant([[b"abc", "\u00e9t\u00e9".encode(), b"\xff\xfe\x80"], [b"a\x00b", b"q", b"xyz"]], name="text")
    tf.identity(tf.strings.length(tf.strings.substr(text, np.int32(1), np.int32(5))), name="tail_bytes")
    tf.identity(tf.strings.length(tf.strings.substr(text, np.int32(-1), np.int32(1), unit="UTF8_CHAR")),
                name="last_char")
    tf.identity(tf.strings.length(tf.strings.substr(text, np.int64([[0], [0]]), np.int64([[-1], [2]]))), name="rows")
    tf.identity(tf.strings.length(tf.strings.substr(text, np.int32(0), np.int32(-1), unit="UTF8_CHAR")),
                name="empty_chars")
    digits = tf.constant(["12345", "-9876"], name="digits")
    tf.identity(tf.strings.to_number(tf.strings.substr(digits, np.int32([1, -3]), np.int32([3, 2])), tf.int32),
                name="pieces")
    return {}, {
        "tail_bytes:0": np.int32([[2, 4, 2], [2, 0, 2]]), "last_char:0": np.int32([[1, 2, 2], [1, 1, 1]]),
        "rows:0": np.int32([[3, 5, 3], [2, 1, 2]]), "empty_chars:0": np.zeros((2, 3), np.int32),
        "pieces:0": i32(234, 87)}
