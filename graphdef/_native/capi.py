"""The C++ runtime in process: the package's one binding of libgraphrun.so (runner/capi/graphrun_c.h).

Every way from Python into the C++ core goes through this module (ctypes). The library is the
package's own (graphdef/_native/, where a wheel carries it and `make cc` links it in a checkout), or
the file $GRAPHDEF_LIBGRAPHRUN names (see graphdef/_native/__init__.py). Inputs are
handed to the library in place (a C-contiguous array of the input's dtype is never copied); each
output is copied once, out of the library's result into a numpy array the caller owns.

Runs may come from any thread, and ctypes releases the GIL for the call, so Python threads (an event
loop) keep going meanwhile. Runs of one CcModel take turns; runs of different CcModels (the same file
loaded twice included) go ahead at once, each on as many OpenMP threads as its `threads` says (see
the header's "Threads").
"""

import ctypes
import os
import threading

import numpy as np

from graphdef import _native
from graphdef._native import library_path  # noqa: F401 (part of this module's interface)

# graphrun_c.h's status codes
OK, USAGE, MODEL, RUN, UNSUPPORTED, INTERNAL = 0, 2, 3, 4, 5, 6


class LibraryMissing(OSError):
    """libgraphrun.so is not there (not built) or does not load."""


class GraphrunError(RuntimeError):
    """A call the library refused or failed; `code` is graphrun_c.h's status, the message its one line."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code

    @property
    def unsupported(self):
        """The model needs an op or dtype graphrun-cc cannot run (Python's runtime may)."""
        return self.code == UNSUPPORTED


_library = None


def _declare(lib):
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    i64p = ctypes.POINTER(ctypes.c_int64)
    model, result = ctypes.c_void_p, ctypes.c_void_p
    signatures = {
        "graphrun_version": ([], ctypes.c_char_p),
        "graphrun_model_load": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(model),
                                 ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
        "graphrun_model_num_inputs": ([model], ctypes.c_int),
        "graphrun_model_num_outputs": ([model], ctypes.c_int),
        "graphrun_model_optimize_summary": ([model], ctypes.c_char_p),
        "graphrun_model_run": ([model, ctypes.c_int, c_char_pp, c_char_pp, ctypes.POINTER(ctypes.c_int), i64p,
                                ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, c_char_pp, ctypes.POINTER(result),
                                ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
        "graphrun_model_set_threads": ([model, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
        "graphrun_result_count": ([result], ctypes.c_int),
        "graphrun_result_dtype": ([result, ctypes.c_int], ctypes.c_char_p),
        "graphrun_result_rank": ([result, ctypes.c_int], ctypes.c_int),
        "graphrun_result_shape": ([result, ctypes.c_int], i64p),
        "graphrun_result_data": ([result, ctypes.c_int], ctypes.c_void_p),
        "graphrun_result_nbytes": ([result, ctypes.c_int], ctypes.c_size_t),
        "graphrun_free_model": ([model], None),
        "graphrun_free_result": ([result], None),
        "graphrun_free_string": ([ctypes.c_void_p], None),
    }
    for side in ("input", "output"):
        signatures[f"graphrun_model_{side}_name"] = ([model, ctypes.c_int], ctypes.c_char_p)
        signatures[f"graphrun_model_{side}_dtype"] = ([model, ctypes.c_int], ctypes.c_char_p)
        signatures[f"graphrun_model_{side}_rank"] = ([model, ctypes.c_int], ctypes.c_int)
        signatures[f"graphrun_model_{side}_shape"] = ([model, ctypes.c_int], i64p)
    signatures["graphrun_model_input_required"] = ([model, ctypes.c_int], ctypes.c_int)
    session, errp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    signatures.update({
        "graphrun_session_create": ([ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.POINTER(session), errp],
                                    ctypes.c_int),
        "graphrun_session_extend": ([session, ctypes.c_void_p, ctypes.c_size_t, errp], ctypes.c_int),
        "graphrun_session_check": ([session, ctypes.c_int, c_char_pp, ctypes.c_int, c_char_pp, ctypes.c_int, c_char_pp,
                                    errp], ctypes.c_int),
        "graphrun_session_run": ([session, ctypes.c_int, c_char_pp, c_char_pp, ctypes.POINTER(ctypes.c_int), i64p,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, c_char_pp, ctypes.c_int, c_char_pp,
                                  ctypes.POINTER(result), errp], ctypes.c_int),
        "graphrun_session_read_variable": ([session, ctypes.c_char_p, ctypes.POINTER(result), errp], ctypes.c_int),
        "graphrun_session_assign_variable": ([session, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, i64p,
                                              ctypes.c_void_p, errp], ctypes.c_int),
        "graphrun_free_session": ([session], None),
    })
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype


def load_library():
    """The loaded library (once per process); raises LibraryMissing saying where it was looked for."""
    global _library
    if _library is None:
        path = library_path()
        if not path.is_file():
            raise LibraryMissing(_native.how_to_get(_native.LIBRARY))
        # libgomp's threads spin long at every barrier unless told otherwise, taking the cores other
        # threads need; graphrun-cc sets the same short spin before libgomp starts, and so must a
        # process loading the library. A spin, not passive waits: waking sleeping threads for each
        # of a CNN's parallel regions costs a small model much of its run (docs/performance.md).
        if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
            os.environ["GOMP_SPINCOUNT"] = "1000"
        # Its own libprotobuf and oneDNN before anything loaded into the global scope: TensorFlow puts
        # its copies (other versions) there, and a protobuf call reaching theirs aborts the process.
        mode = os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0)
        try:
            lib = ctypes.CDLL(str(path), mode=mode)
            _declare(lib)
        except (OSError, AttributeError) as e:
            raise LibraryMissing(f"{path} does not load: {e}") from None
        _library = lib
    return _library


def _check(lib, status, error):
    if status == OK:
        return
    message = ctypes.cast(error, ctypes.c_char_p).value.decode("utf-8", "replace") if error.value else \
        f"graphrun-cc failed (status {status}) without a message"
    lib.graphrun_free_string(error)
    raise GraphrunError(status, message)


def _shape(rank, dims):
    if rank < 0:
        return None
    return [None if dims[i] < 0 else int(dims[i]) for i in range(rank)]


def _strings(texts):
    texts = [str(t).encode() for t in texts]
    return (ctypes.c_char_p * len(texts))(*texts)


def _native_order(value):
    """`value` as a C-contiguous array in this machine's byte order: the library reads the elements of
    the dtype it is told ("float32"), and a '>f4' array's name is "float32" too."""
    array = np.asarray(value, order="C")
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


class _Feeds:
    """A run's feeds as graphrun_c.h takes them. An array already C-contiguous is handed over in place
    (np.asarray copies nothing then); the arrays are held here until the call returns."""

    def __init__(self, feeds):
        self.arrays = arrays = [_native_order(v) for v in feeds.values()]
        self.count = count = len(arrays)
        self.names = (ctypes.c_char_p * count)(*(str(n).encode() for n in feeds))
        self.dtypes = (ctypes.c_char_p * count)(*(a.dtype.name.encode() for a in arrays))
        self.ranks = (ctypes.c_int * count)(*(a.ndim for a in arrays))
        self.dims = (ctypes.c_int64 * max(1, sum(a.ndim for a in arrays)))(*(d for a in arrays for d in a.shape))
        self.data = (ctypes.c_void_p * count)(*(a.ctypes.data for a in arrays))


def _values(lib, result, names):
    """The result's tensors as numpy arrays the caller owns (copied once); frees the result."""
    try:
        values = []
        for k in range(lib.graphrun_result_count(result)):
            shape = tuple(lib.graphrun_result_shape(result, k)[i] for i in range(lib.graphrun_result_rank(result, k)))
            value = np.empty(shape, np.dtype(lib.graphrun_result_dtype(result, k).decode()))
            if value.nbytes != lib.graphrun_result_nbytes(result, k):
                raise GraphrunError(INTERNAL, f"{names[k]}: {lib.graphrun_result_nbytes(result, k)} "
                                              f"bytes for {value.nbytes} expected")
            if value.nbytes:
                ctypes.memmove(value.ctypes.data, lib.graphrun_result_data(result, k), value.nbytes)
            values.append(value)
        return values
    finally:
        lib.graphrun_free_result(result)


class CcModel:
    """A model loaded into the library: inputs/outputs as (name, numpy dtype, shape, required), and run().
    `threads`: the OpenMP threads each run uses (None or 0: OpenMP's default, one per core)."""

    def __init__(self, path, signature=None, optimize=True, threads=None):
        self._lib = lib = load_library()
        handle, error = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.graphrun_model_load(os.fsencode(str(path)), signature.encode() if signature else None,
                                         int(bool(optimize)), ctypes.byref(handle), ctypes.byref(error))
        _check(lib, status, error)
        self._handle = handle
        self.inputs = [(lib.graphrun_model_input_name(handle, i).decode(),
                        np.dtype(lib.graphrun_model_input_dtype(handle, i).decode()),
                        _shape(lib.graphrun_model_input_rank(handle, i), lib.graphrun_model_input_shape(handle, i)),
                        bool(lib.graphrun_model_input_required(handle, i)))
                       for i in range(lib.graphrun_model_num_inputs(handle))]
        self.outputs = [(lib.graphrun_model_output_name(handle, i).decode(),
                         np.dtype(lib.graphrun_model_output_dtype(handle, i).decode()),
                         _shape(lib.graphrun_model_output_rank(handle, i), lib.graphrun_model_output_shape(handle, i)),
                         True)
                        for i in range(lib.graphrun_model_num_outputs(handle))]
        self.optimize_summary = lib.graphrun_model_optimize_summary(handle).decode()
        self.threads = int(threads or 0)
        if self.threads:
            error = ctypes.c_void_p()
            _check(lib, lib.graphrun_model_set_threads(handle, self.threads, ctypes.byref(error)), error)

    def run(self, feeds, fetches):
        """feeds {input name: array}, fetches [output name] -> [ndarray] in fetch order; raises GraphrunError."""
        lib = self._lib
        args = _Feeds(feeds)
        wanted = _strings(fetches)
        result, error = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.graphrun_model_run(self._handle, args.count, args.names, args.dtypes, args.ranks, args.dims,
                                        args.data, len(fetches), wanted, ctypes.byref(result), ctypes.byref(error))
        _check(lib, status, error)
        return _values(lib, result, fetches)

    def close(self):
        if getattr(self, "_handle", None):
            self._lib.graphrun_free_model(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class CcSession:
    """A TF1 session in the C++ core (graphrun_c.h's graphrun_session): a serialized GraphDef, its
    variables kept between runs, run(feeds, fetches, targets) with TensorFlow's names."""

    def __init__(self, graph_def_bytes, optimize=True):
        self._lib = lib = load_library()
        self._handle = None
        # close() from another thread (TF1 allows it) must not free the session under a call in the
        # library: calls count themselves in and out, and the last one out frees a closed session.
        self._guard = threading.Lock()
        self._calls = 0
        self._closing = False
        graph_def_bytes = bytes(graph_def_bytes)
        handle, error = ctypes.c_void_p(), ctypes.c_void_p()
        status = lib.graphrun_session_create(graph_def_bytes, len(graph_def_bytes), int(bool(optimize)),
                                             ctypes.byref(handle), ctypes.byref(error))
        _check(lib, status, error)
        self._handle = handle

    def _call(self, function, *args):
        """function(handle, *args): the library's status, the handle kept alive for the call."""
        with self._guard:
            if not self._handle or self._closing:
                raise GraphrunError(USAGE, "the session is closed")
            self._calls += 1
            handle = self._handle
        try:
            return function(handle, *args)
        finally:
            with self._guard:
                self._calls -= 1
                if self._closing and self._calls == 0:
                    self._free()

    def extend(self, graph_def_bytes):
        """Adds (or replaces by name) the nodes of a serialized GraphDef; variables keep their values."""
        graph_def_bytes = bytes(graph_def_bytes)
        error = ctypes.c_void_p()
        status = self._call(self._lib.graphrun_session_extend, graph_def_bytes, len(graph_def_bytes),
                            ctypes.byref(error))
        _check(self._lib, status, error)

    def check(self, feed_names, fetches, targets):
        """Raises GraphrunError (.unsupported for an op without a kernel) unless these could run."""
        feed_names, fetches, targets = list(feed_names), list(fetches), list(targets)
        error = ctypes.c_void_p()
        status = self._call(self._lib.graphrun_session_check, len(feed_names), _strings(feed_names),
                            len(fetches), _strings(fetches), len(targets), _strings(targets), ctypes.byref(error))
        _check(self._lib, status, error)

    def run(self, feeds, fetches, targets=()):
        """feeds {"node" or "node:k": array}, fetches ["node" or "node:k"], targets [node name] -> [ndarray]
        in fetch order, after every target ran; raises GraphrunError."""
        lib = self._lib
        fetches, targets = list(fetches), list(targets)
        args = _Feeds(feeds)
        result, error = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._call(lib.graphrun_session_run, args.count, args.names, args.dtypes, args.ranks, args.dims,
                            args.data, len(fetches), _strings(fetches), len(targets), _strings(targets),
                            ctypes.byref(result), ctypes.byref(error))
        _check(lib, status, error)
        return _values(lib, result, fetches)

    def read_variable(self, name):
        """The variable's value (a copy), or None while it has none; GraphrunError for an unknown name."""
        result, error = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._call(self._lib.graphrun_session_read_variable, str(name).encode(), ctypes.byref(result),
                            ctypes.byref(error))
        _check(self._lib, status, error)
        values = _values(self._lib, result, [name])
        return values[0] if values else None

    def assign_variable(self, name, value):
        """Sets the variable's value (copied by the library); the dtype must be the variable's."""
        array = _native_order(value)
        dims = (ctypes.c_int64 * max(1, array.ndim))(*array.shape)
        error = ctypes.c_void_p()
        status = self._call(self._lib.graphrun_session_assign_variable, str(name).encode(),
                            array.dtype.name.encode(), array.ndim, dims, array.ctypes.data, ctypes.byref(error))
        _check(self._lib, status, error)

    def _free(self):
        self._lib.graphrun_free_session(self._handle)
        self._handle = None

    def close(self):
        """Frees the session now, or when the calls other threads are making return."""
        if not hasattr(self, "_guard"):
            return
        with self._guard:
            if self._handle and not self._closing:
                self._closing = True
                if self._calls == 0:
                    self._free()

    def __del__(self):
        self.close()
