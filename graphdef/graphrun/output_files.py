"""`--out DIR`: one .npy file per fetched tensor, named after the tensor.

A tensor name becomes a file name by turning each character that is not safe in a file
name on every common system ('/', ':', and the '\\' and '>' node names may hold) into '_':
`layer/Relu:0` is written to `DIR/layer_Relu_0.npy`. Two different tensors that would get
the same file are refused before anything is written. A string tensor is written as a
fixed-width bytes ('S') array, the form .npy holds without pickling.
"""

import os
import re

import numpy as np

from graphdef.framework import limits
from graphdef.framework.errors import ResourceExhaustedError

_UNSAFE = re.compile(r"[/:\\>]")


class OutputFileError(ValueError):
    """The outputs cannot be written as asked; the message is one line."""


def file_name(tensor_name):
    return _UNSAFE.sub("_", tensor_name) + ".npy"


def plan_files(directory, names):
    """{tensor name: path}, refusing two tensors that map to one file."""
    paths, owner = {}, {}
    for name in names:
        base = file_name(name)
        if owner.get(base, name) != name:
            raise OutputFileError(f"--out: '{owner[base]}' and '{name}' would both be written to {base}")
        owner[base] = name
        paths[name] = os.path.join(directory, base)
    return paths


def _fixed_width(name, array):
    """A string tensor as a fixed-width bytes ('S') array, which .npy holds without pickling."""
    flat = array.reshape(-1).tolist()
    width = max(map(len, flat), default=0)
    if any(item.endswith(b"\0") for item in flat):
        raise OutputFileError(f"--out: '{name}' holds a string ending in NUL bytes, which a .npy 'S' array "
                              "would drop; print it with --json instead")
    try:
        limits.check(array.shape, np.dtype(f"S{max(width, 1)}"), what="string array", where=f"--out: '{name}'")
    except ResourceExhaustedError as e:
        raise OutputFileError(str(e)) from None
    return np.array(flat, dtype=f"S{max(width, 1)}").reshape(array.shape)


def write_outputs(directory, outputs):
    """Saves each (name, value) of `outputs`; returns [(name, value, path)] in the same order."""
    paths = plan_files(directory, [name for name, _ in outputs])
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise OutputFileError(f"--out {directory}: cannot create the directory ({e.strerror})") from None
    written = []
    for name, value in outputs:
        path = paths[name]
        array = np.asarray(value)
        if array.dtype.kind == "O":
            array = _fixed_width(name, array)
        try:
            np.save(path, array, allow_pickle=False)
        except OSError as e:
            raise OutputFileError(f"--out: cannot write {path} ({e.strerror})") from None
        written.append((name, value, path))
    return written
