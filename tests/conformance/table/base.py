"""What every conformance family module shares: the Case record, the table, and literal helpers."""

from dataclasses import dataclass, field

import numpy as np

import graphdef as tf


@dataclass(frozen=True)
class Case:
    name: str
    doc: str
    make: object                    # () -> (feeds, expected); builds into the default graph
    skip: dict = field(default_factory=dict)  # runtime -> written reason


CASES = []


def case(name, doc, skip=None):
    def register(make):
        CASES.append(Case(name, doc, make, skip=dict(skip or {})))
        return make
    return register


def f32(*v):
    return np.array(v, np.float32)


def f64(*v):
    return np.array(v, np.float64)


def i32(*v):
    return np.array(v, np.int32)


def i64(*v):
    return np.array(v, np.int64)


def u8(*v):
    return np.array(v, np.uint8)


def i8(*v):
    return np.array(v, np.int8)


def u16(*v):
    return np.array(v, np.uint16)


def u64(*v):
    return np.array(v, np.uint64)


def rounded(fn, dtype, *args):
    """`fn` worked in float64, rounded once to `dtype`: correctly rounded for + - * / sqrt."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*(np.asarray(a, np.float64) for a in args))).astype(dtype)


def feed(name, value, shape=None):
    """A placeholder of `value`'s dtype; its static shape is `value`'s unless given."""
    return tf.placeholder(tf.as_dtype(value.dtype), value.shape if shape is None else shape, name=name)

INF, NAN = np.inf, np.nan
