"""tf.gfile / tf.io.gfile: the file helpers TF1 code reads models with, on local files."""

import glob as _glob
import os
import shutil


class GFile:
    """A local file opened like `open(path, mode)`; TF1 code reads .pb files through it."""

    def __init__(self, name, mode="r"):
        self._file = open(name, mode)  # noqa: SIM115 - closed by close() or the context manager

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __getattr__(self, attr):
        return getattr(self._file, attr)

    def __iter__(self):
        return iter(self._file)

    def size(self):
        return os.fstat(self._file.fileno()).st_size


Open = GFile


def exists(path):
    return os.path.exists(path)


def isdir(path):
    return os.path.isdir(path)


def makedirs(path):
    os.makedirs(path, exist_ok=True)


def listdir(path):
    return os.listdir(path)


def glob(pattern):
    return _glob.glob(pattern)


def remove(path):
    os.remove(path)


def rmtree(path):
    shutil.rmtree(path)


# TF1's capitalised spellings
Exists, IsDirectory, MakeDirs, ListDirectory, Glob, Remove, DeleteRecursively = (
    exists, isdir, makedirs, listdir, glob, remove, rmtree)
