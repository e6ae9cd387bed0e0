"""oneDNN's float32 convolutions for the numpy kernels of Conv2D, DepthwiseConv2dNative and their
fused forms, with its products for fused MatMuls and its max pooling for MaxPool: numpy's best
for a convolution is one BLAS call on an im2col matrix, which on real CNNs runs at half of what a
convolution library reaches (and its bias and activation in one more single-threaded pass each).
oneDNN is the kernel library graphrun-cc already uses.

A ctypes binding of oneDNN 3's C API (dnnl.h), loaded from $GRAPHDEF_ONEDNN_LIBRARY (a path to
libdnnl.so.3), else the copy `make cc` unpacks into the source tree's build/onednn/lib. Without
it, or with GRAPHDEF_ONEDNN=0, or for a problem oneDNN does not take, `convolve` returns None and
the caller's numpy kernel runs: results agree within the ops' declared tolerance either way.
GRAPHDEF_ONEDNN_MAX_CPU_ISA (oneDNN's names: SSE41, AVX, AVX2, AVX512_CORE, ...) caps the
instruction set, as GRAPHRUN_CC_MAX_CPU_ISA does graphrun-cc's (tests/cpu_profiles.py).

Only the direct algorithm is asked for (Winograd rounds differently from a sum of products), in
strict float32. A filter that is a read-only array (a Const's value) is reordered into oneDNN's
layout once. Runs take one lock (each already spreads over every core), so they share one
scratchpad, and a problem writes into its previous output again once nothing else holds it
(kept_buffers.py).
"""

import ctypes
import mmap
import os
import threading
from pathlib import Path

import numpy as np

from graphdef.framework.limits import max_tensor_bytes
from graphdef.ops.kept_buffers import ALIGN, OutputSlot, address, aligned_empty_at

ENV_LIBRARY = "GRAPHDEF_ONEDNN_LIBRARY"
ENV_SWITCH = "GRAPHDEF_ONEDNN"
ENV_MAX_ISA = "GRAPHDEF_ONEDNN_MAX_CPU_ISA"

# oneDNN 3's ABI (dnnl_types.h, dnnl_common_types.h): stable within the major version
_F32, _TAG_ANY, _TAG_A, _TAG_AB, _TAG_BA, _TAG_NHWC, _TAG_HWIO, _TAG_HWIGO = 3, 1, 2, 3, 14, 22, 28, 39
_CPU, _FORWARD_INFERENCE, _CONVOLUTION_DIRECT, _POOLING_MAX = 1, 96, 1, 0x1ff
_RELU, _CLIP_V2 = 32, 47
_QUERY_IMPL_INFO_STR, _QUERY_WEIGHTS_MD, _QUERY_SCRATCHPAD_MD = 8, 131, 136
_FPMATH_STRICT, _SCRATCHPAD_USER, _STREAM_DEFAULT = 0, 1, 1
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS, _ARG_BIAS, _ARG_SCRATCHPAD = 1, 17, 33, 41, 80
_SUCCESS = 0
_ISAS = {"SSE41": 1, "AVX": 3, "AVX2": 7, "AVX2_VNNI": 15, "AVX512_CORE": 39, "AVX512_CORE_VNNI": 103,
         "AVX512_CORE_BF16": 231, "AVX512_CORE_FP16": 495, "AVX512_CORE_AMX": 4079}

_Dims = ctypes.c_int64 * 12


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


_SIGNATURES = {
    "dnnl_engine_create": [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t],
    "dnnl_stream_create": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint],
    "dnnl_set_max_cpu_isa": [ctypes.c_int],
    "dnnl_memory_desc_create_with_tag": [ctypes.c_void_p, ctypes.c_int, _Dims, ctypes.c_int, ctypes.c_int],
    "dnnl_memory_desc_destroy": [ctypes.c_void_p],
    "dnnl_memory_desc_equal": [ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_memory_desc_get_size": [ctypes.c_void_p],
    "dnnl_primitive_attr_create": [ctypes.c_void_p],
    "dnnl_primitive_attr_destroy": [ctypes.c_void_p],
    "dnnl_primitive_attr_set_fpmath_mode": [ctypes.c_void_p, ctypes.c_int],
    "dnnl_primitive_attr_set_scratchpad_mode": [ctypes.c_void_p, ctypes.c_int],
    "dnnl_primitive_attr_set_post_ops": [ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_post_ops_create": [ctypes.c_void_p],
    "dnnl_post_ops_destroy": [ctypes.c_void_p],
    "dnnl_post_ops_append_eltwise": [ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_float],
    "dnnl_post_ops_append_sum": [ctypes.c_void_p, ctypes.c_float, ctypes.c_int32, ctypes.c_int],
    "dnnl_convolution_forward_primitive_desc_create": [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.c_void_p, _Dims, _Dims, _Dims, _Dims, ctypes.c_void_p],
    "dnnl_pooling_forward_primitive_desc_create": [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
        _Dims, _Dims, _Dims, _Dims, _Dims, ctypes.c_void_p],
    "dnnl_matmul_primitive_desc_create": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_reorder_primitive_desc_create": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_primitive_desc_next_impl": [ctypes.c_void_p],
    "dnnl_primitive_desc_query": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p],
    "dnnl_primitive_desc_query_md": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
    "dnnl_primitive_desc_destroy": [ctypes.c_void_p],
    "dnnl_primitive_create": [ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_primitive_destroy": [ctypes.c_void_p],
    "dnnl_primitive_execute": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_ExecArg)],
    "dnnl_memory_create": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_memory_destroy": [ctypes.c_void_p],
    "dnnl_memory_set_data_handle": [ctypes.c_void_p, ctypes.c_void_p],
    "dnnl_stream_wait": [ctypes.c_void_p],
}
_RESTYPES = {"dnnl_memory_desc_equal": ctypes.c_int, "dnnl_memory_desc_get_size": ctypes.c_size_t,
             "dnnl_primitive_desc_query_md": ctypes.c_void_p}


class _OneDNN:
    """The loaded library, its CPU engine and stream."""

    def __init__(self, path):
        # the library's own symbols first: TensorFlow, in the same process, has its own oneDNN
        self.lib = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0))
        for name, argtypes in _SIGNATURES.items():
            function = getattr(self.lib, name)
            function.argtypes = argtypes
            function.restype = _RESTYPES.get(name, ctypes.c_int)
        cap = os.environ.get(ENV_MAX_ISA, "").strip().upper()
        if cap in _ISAS:
            self.lib.dnnl_set_max_cpu_isa(_ISAS[cap])  # refused (harmlessly) once oneDNN has fixed its ISA
        self.engine, self.stream = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.dnnl_engine_create(ctypes.byref(self.engine), _CPU, 0), "create the CPU engine")
        self.check(self.lib.dnnl_stream_create(ctypes.byref(self.stream), self.engine, _STREAM_DEFAULT),
                   "create a stream")
        # one run at a time: each already spreads over every core
        self.lock = threading.Lock()
        # (array, address): shared by every run, grown as needed, under the lock
        self.scratchpad = aligned_empty_at((0,), 0, np.uint8)

    def scratchpad_of(self, size):
        """(a scratchpad of `size` bytes, its address)."""
        if size > _SCRATCHPAD_KEPT_MAX:  # a rare huge one is not kept for the life of the process
            return aligned_empty_at((size,), size, np.uint8)
        if self.scratchpad[0].size < size:
            self.scratchpad = aligned_empty_at((size,), size, np.uint8)
        return self.scratchpad

    @staticmethod
    def check(status, what):
        if status != _SUCCESS:
            raise OSError(f"oneDNN could not {what} (status {status})")

    def md(self, dims, tag):
        handle = ctypes.c_void_p()
        self.check(self.lib.dnnl_memory_desc_create_with_tag(ctypes.byref(handle), len(dims), _dims(dims), _F32, tag),
                   "describe a tensor")
        return handle

    def memory(self, md, data):
        """A memory object of `md` over the buffer at address `data` (None: pointed at later)."""
        handle = ctypes.c_void_p()
        self.check(self.lib.dnnl_memory_create(ctypes.byref(handle), md, self.engine, ctypes.c_void_p(data)),
                   "wrap a buffer")
        return handle

    def execute(self, primitive, args):
        """Runs `primitive` on {arg: (memory desc, buffer address)}, then frees the wrappers."""
        memories = [(arg, self.memory(md, data)) for arg, (md, data) in args.items()]
        try:
            packed = (_ExecArg * len(memories))(*[_ExecArg(arg, mem) for arg, mem in memories])
            self.check(self.lib.dnnl_primitive_execute(primitive, self.stream, len(memories), packed), "run")
            self.check(self.lib.dnnl_stream_wait(self.stream), "finish a run")
        finally:
            for _, mem in memories:
                self.lib.dnnl_memory_destroy(mem)


def _dims(values):
    dims = _Dims()
    for i, v in enumerate(values):
        dims[i] = int(v)
    return dims


_state = {"library": None, "tried": False}
_state_lock = threading.Lock()


def library_path():
    """$GRAPHDEF_ONEDNN_LIBRARY, else <source tree>/build/onednn/lib/libdnnl.so.3."""
    given = os.environ.get(ENV_LIBRARY)
    return Path(given) if given else Path(__file__).resolve().parents[2] / "build" / "onednn" / "lib" / "libdnnl.so.3"


def enabled():
    """False when GRAPHDEF_ONEDNN is 0 (or false, off, no): the numpy kernels then run alone."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


def library():
    """The loaded oneDNN, or None (switched off, not built, or it does not load: numpy serves)."""
    if not enabled():
        return None
    if not _state["tried"]:
        with _state_lock:
            if not _state["tried"]:
                path = library_path()
                if path.is_file():
                    try:
                        _state["library"] = _OneDNN(path)
                    except (OSError, AttributeError):
                        _state["library"] = None
                _state["tried"] = True
    return _state["library"]


class _Problem:
    """One convolution, matrix product or pooling (no weights) made into a oneDNN primitive: shapes,
    bias and activation fixed. `create(pd pointer, attr, any_weights)` asks oneDNN for the primitive
    descriptor."""

    # what __del__ frees, set as __init__ makes them
    src = dst = user_weights = bias_md = pd = primitive = reorder = None
    memories = ()

    def __init__(self, dnn, out_shape, src, dst, weights, weight_tag, bias_md, activation, alpha, create,
                 depthwise=False, pads=False, residual=False):
        self.dnn, self.out_shape, self.pads = dnn, out_shape, pads
        self.src, self.dst, self.bias_md = src, dst, bias_md
        lib = dnn.lib
        # weights None: a primitive without them (pooling)
        self.user_weights = dnn.md(weights, weight_tag) if weights else None
        any_weights = dnn.md(weights, _TAG_ANY) if weights else None
        attr, post_ops, pd = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        dnn.check(lib.dnnl_primitive_attr_create(ctypes.byref(attr)), "make attributes")
        try:
            dnn.check(lib.dnnl_primitive_attr_set_fpmath_mode(attr, _FPMATH_STRICT), "ask for strict float32")
            dnn.check(lib.dnnl_primitive_attr_set_scratchpad_mode(attr, _SCRATCHPAD_USER), "take the scratchpad")
            if activation or residual:
                dnn.check(lib.dnnl_post_ops_create(ctypes.byref(post_ops)), "make post-ops")
            if residual:
                # dst = product + bias + 1.0 * dst, the residual the output buffer was filled with
                # (added within oneDNN's accumulation: not AddV2's bits, within the chain's policy)
                dnn.check(lib.dnnl_post_ops_append_sum(post_ops, 1.0, 0, 0), "add a residual")
            if activation:
                alg, a, b = {"Relu": (_RELU, 0.0, 0.0), "LeakyRelu": (_RELU, alpha, 0.0),
                             # clip_v2 lets a NaN through, as Relu6 does (clip would make it 0)
                             "Relu6": (_CLIP_V2, 0.0, 6.0)}[activation]
                dnn.check(lib.dnnl_post_ops_append_eltwise(post_ops, alg, a, b), "add an activation")
            if post_ops:
                dnn.check(lib.dnnl_primitive_attr_set_post_ops(attr, post_ops), "set post-ops")
            status = create(ctypes.byref(pd), attr, any_weights)
            if status == _SUCCESS and depthwise and not _prefer_jit_depthwise(lib, pd):
                # next_impl moved the descriptor past the list's end: the first choice, made again
                lib.dnnl_primitive_desc_destroy(pd)
                pd = ctypes.c_void_p()
                status = create(ctypes.byref(pd), attr, any_weights)
        finally:
            lib.dnnl_primitive_attr_destroy(attr)
            if post_ops:
                lib.dnnl_post_ops_destroy(post_ops)
            if any_weights:
                lib.dnnl_memory_desc_destroy(any_weights)
        if status != _SUCCESS:
            return  # no implementation for this problem: numpy serves it
        self.pd = pd
        self.weights = lib.dnnl_primitive_desc_query_md(pd, _QUERY_WEIGHTS_MD, 0) if weights else None
        self.weights_size = lib.dnnl_memory_desc_get_size(self.weights) if weights else 0
        self.scratchpad = lib.dnnl_primitive_desc_query_md(pd, _QUERY_SCRATCHPAD_MD, 0)
        self.scratchpad_size = lib.dnnl_memory_desc_get_size(self.scratchpad)
        primitive = ctypes.c_void_p()
        dnn.check(lib.dnnl_primitive_create(ctypes.byref(primitive), pd), "make a primitive")
        self.primitive = primitive
        self.out_count = int(np.prod(out_shape, dtype=np.int64))
        self.scratchpad_size = max(self.scratchpad_size, 1)
        self._bind()
        if weights and not lib.dnnl_memory_desc_equal(self.weights, self.user_weights):
            reorder_pd, reorder = ctypes.c_void_p(), ctypes.c_void_p()
            dnn.check(lib.dnnl_reorder_primitive_desc_create(ctypes.byref(reorder_pd), self.user_weights, dnn.engine,
                                                             self.weights, dnn.engine, None), "plan a reorder")
            try:
                dnn.check(lib.dnnl_primitive_create(ctypes.byref(reorder), reorder_pd), "make a reorder")
            finally:
                lib.dnnl_primitive_desc_destroy(reorder_pd)
            self.reorder = reorder
        self.outputs = OutputSlot()
        # (id of a read-only array a node reads, its role: _FILTER or _BIAS) -> (the array, (the buffer
        # oneDNN reads: a filter's reordered copy, else the array itself, and its address)): one per
        # node of this shape; keeping the array keeps its id from being reused
        self.constants = {}
        self.bound = [None] * len(self.memories)  # the address each memory points at now

    def __del__(self):
        lib = self.dnn.lib
        for memory in self.memories:
            lib.dnnl_memory_destroy(memory)
        for primitive in (self.primitive, self.reorder):
            if primitive:
                lib.dnnl_primitive_destroy(primitive)
        if self.pd:
            lib.dnnl_primitive_desc_destroy(self.pd)  # after this, the queried descs are gone too
        for md in (self.src, self.dst, self.user_weights, self.bias_md):
            if md:
                lib.dnnl_memory_desc_destroy(md)

    def weights_for(self, f):
        """(the filter in oneDNN's layout, its address): `f` itself when that is its layout, else a
        reordered copy, kept for a read-only filter (a Const's, which never changes)."""
        return self._constant(f, self._reordered, _FILTER)

    def _reordered(self, f):
        if self.reorder is None:
            return f, address(f)
        packed, at = aligned_empty_at((self.weights_size,), self.weights_size, np.uint8)
        self.dnn.execute(self.reorder, {_ARG_SRC: (self.user_weights, address(f)), _ARG_DST: (self.weights, at)})
        return packed, at

    def _constant(self, array, prepare, role):
        """prepare(array), made once for a read-only `array` that is all of a read-only array's
        memory (a Const's value, or a reshape of one: a new view every run), in its `role`."""
        root = _constant_root(array)
        if root is None:
            return prepare(array)
        hit = self.constants.get((id(root), role))
        if hit is not None and hit[0] is root:
            return hit[1]
        made = prepare(array)
        if len(self.constants) >= _CONSTANTS_MAX:
            self.constants.clear()
        self.constants[id(root), role] = (root, made)
        return made

    def known_finite(self, f):
        """True for a filter already run here, which was checked finite when it came."""
        root = _constant_root(f)
        hit = None if root is None else self.constants.get((id(root), _FILTER))
        return hit is not None and hit[0] is root

    def usable(self):
        """Made, and its scratchpad and reordered weights within the tensor size limit (a hostile
        window could ask oneDNN for more; numpy's kernel then refuses it with its own message)."""
        limit = max_tensor_bytes()
        return self.primitive is not None and self.scratchpad_size <= limit and self.weights_size <= limit

    def _bind(self):
        """The primitive's memory objects and argument list, made once: each run only points them
        at its buffers (a run costs a few ctypes calls, which on MobileNetV2's small layers showed)."""
        descs = [(_ARG_SRC, self.src), (_ARG_DST, self.dst), (_ARG_SCRATCHPAD, self.scratchpad)]
        descs += [(_ARG_WEIGHTS, self.weights)] if self.weights else []
        descs += [(_ARG_BIAS, self.bias_md)] if self.bias_md else []
        self.memories = [self.dnn.memory(md, None) for _, md in descs]
        self.exec_args = (_ExecArg * len(descs))(*[_ExecArg(arg, mem) for (arg, _), mem in zip(descs, self.memories)])

    def run(self, x, f, bias, residual=None, residual_writable=False):
        out = None
        if residual_writable and residual.flags.c_contiguous and residual.flags.writeable:
            out_address = address(residual)
            if out_address % ALIGN == 0:
                out = residual  # the sum post-op reads it, then writes over it
        if out is None:
            out, out_address = self.outputs.empty_at(self.out_shape, self.out_count)
            if residual is not None:
                np.copyto(out, residual)
        scratchpad = self.dnn.scratchpad_of(self.scratchpad_size)
        weights = self.weights_for(f) if self.weights else None
        bias = self._constant(bias, _with_address, _BIAS) if self.bias_md else None
        addresses = (address(x), out_address, scratchpad[1]) + ((weights[1],) if weights else ())
        addresses += (bias[1],) if bias else ()
        lib, bound = self.dnn.lib, self.bound
        for i, at in enumerate(addresses):
            if bound[i] != at:  # the scratchpad, and a node's own filter and bias, stay where they were
                bound[i] = None  # unknown until the call succeeds
                self.dnn.check(lib.dnnl_memory_set_data_handle(self.memories[i], at), "point at a buffer")
                bound[i] = at
        self.dnn.check(lib.dnnl_primitive_execute(self.primitive, self.dnn.stream, len(self.exec_args),
                                                  self.exec_args), "run")
        self.dnn.check(lib.dnnl_stream_wait(self.dnn.stream), "finish a run")
        return out


def _with_address(array):
    return array, address(array)


def _constant_root(array):
    """The array owning a read-only `array`'s memory, when `array` views all of it and nothing in
    the program can write there (the owner read-only, its memory numpy's own, an immutable bytes
    object or a read-only view of one or of a weights file's read-only map): what it holds then
    never changes while it lives. Else None."""
    if array.flags.writeable:
        return None
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.flags.writeable or not _immutable(root.base) or root.nbytes != array.nbytes:
        return None
    return root


def _immutable(memory):
    if memory is None or type(memory) is bytes:
        return True
    return type(memory) is memoryview and memory.readonly and type(memory.obj) in (bytes, mmap.mmap)


def _prefer_jit_depthwise(lib, pd):
    """oneDNN 3.2 ranks its brdgmm depthwise kernel first on AVX-512; its jit_dw kernel of the same
    ISA ran MobileNetV2's depthwise layers faster (graphrun-cc measured; dnnl_conv.cc does the same).
    Moves `pd` to jit_dw when it is offered; False when the list ran out without it (`pd` is then
    past its first choice and must be made again)."""
    name = _impl_name(lib, pd)
    if not name.startswith("brdgmm_dw:"):
        return True
    wanted = "jit_dw" + name[name.index(":"):]
    while lib.dnnl_primitive_desc_next_impl(pd) == _SUCCESS:
        if _impl_name(lib, pd) == wanted:
            return True
    return False


def _impl_name(lib, pd):
    text = ctypes.c_char_p()
    if lib.dnnl_primitive_desc_query(pd, _QUERY_IMPL_INFO_STR, 0, ctypes.byref(text)) != _SUCCESS or not text.value:
        return ""
    return text.value.decode("ascii", "replace")


# Below this many multiply-adds numpy's product beats a oneDNN call's cost (the 20-32-10 MLP of
# benchmarks/bench_inference.py at batch 256 ran 0.063 -> 0.084 ms through oneDNN); a CNN's
# classifier (1 x 1280 x 1000 in MobileNetV2) is above it
MATMUL_MIN_WORK = 1 << 20
_problems = {}
_FILTER, _BIAS = 0, 1  # the roles of the read-only arrays a problem keeps
_PROBLEMS_MAX = 512
_CONSTANTS_MAX = 64
_SCRATCHPAD_KEPT_MAX = 64 << 20


def convolve(x, f, groups, window, geometry, bias=None, activation=None, alpha=0.0, residual=None,
             residual_writable=False):
    """The NHWC float32 convolution of `x` by the [KH, KW, C/groups, out] filter `f` (+ `bias`, + a
    `residual` of the output's shape, then `activation`: Relu, Relu6 or LeakyRelu with `alpha`) by
    oneDNN (into the residual's own array when `residual_writable` and it is aligned), or None when
    numpy must serve (a residual that broadcasts, too):
    no oneDNN, another dtype, a shape oneDNN's kernels are not meant for, or a padded window whose
    filter holds an inf or NaN (oneDNN skips padding taps; TF multiplies them, making NaN)."""
    dnn = library()
    if dnn is None or x.dtype != np.float32 or f.dtype != np.float32 or x.ndim != 4 or f.ndim != 4:
        return None
    if bias is not None and (bias.dtype != np.float32 or bias.shape != (f.shape[3],)):
        return None
    n, h, w, c = x.shape
    kh, kw, ci, co = f.shape
    (oh, top, bottom), (ow, left, right) = geometry
    extent_h, extent_w = (kh - 1) * window.dh + 1, (kw - 1) * window.dw + 1
    if (min(n, h, w, c, co, oh, ow, kh, kw, ci) <= 0 or c != ci * groups or co % groups
            or max(top, bottom) >= extent_h or max(left, right) >= extent_w):
        return None
    if residual is not None and (residual.dtype != np.float32 or residual.shape != (n, oh, ow, co)):
        return None
    key = ("conv", x.shape, f.shape, groups, window.sh, window.sw, window.dh, window.dw, top, bottom, left, right,
           bias is not None, residual is not None, activation, float(alpha))

    def make():
        src, dst = dnn.md((n, c, h, w), _TAG_NHWC), dnn.md((n, co, oh, ow), _TAG_NHWC)
        bias_md = dnn.md((co,), _TAG_A) if bias is not None else None
        weights = (co, ci, kh, kw) if groups == 1 else (groups, co // groups, ci, kh, kw)

        def create(pd, attr, any_weights):
            return dnn.lib.dnnl_convolution_forward_primitive_desc_create(
                pd, dnn.engine, _FORWARD_INFERENCE, _CONVOLUTION_DIRECT, src, any_weights, bias_md, dst,
                _dims((window.sh, window.sw)), _dims((window.dh - 1, window.dw - 1)), _dims((top, left)),
                _dims((bottom, right)), attr)
        return _Problem(dnn, (n, oh, ow, co), src, dst, weights, _TAG_HWIO if groups == 1 else _TAG_HWIGO, bias_md,
                        activation, alpha, create, depthwise=groups == c and groups == co,
                        pads=bool(top or bottom or left or right), residual=residual is not None)

    problem = _problem(dnn, key, make)
    if not problem.usable():
        return None
    if problem.pads and not (problem.known_finite(f) or np.isfinite(f).all()):
        return None
    return _run(dnn, problem, x, f, bias, residual, residual_writable)


def max_pool(x, window, geometry):
    """TF's float32 NHWC MaxPool of `x` by oneDNN, or None when numpy must serve. oneDNN's max starts
    at the lowest finite value and takes a tap only when strictly greater, skipping padding, as
    TF's kernel does: NaN and -inf never win, so a window of only those gives the lowest value."""
    dnn = library()
    if dnn is None or x.dtype != np.float32 or x.ndim != 4 or min(x.shape) <= 0:
        return None
    n, h, w, c = x.shape
    (oh, top, bottom), (ow, left, right) = geometry
    # a window larger than the input stays with numpy, which visits only the offsets that reach
    # the input: SAME pads a hostile ksize of 2^31 to fit, and oneDNN took minutes on one (under
    # the lock every run takes); padding as wide as the window stays too
    if (min(oh, ow) <= 0 or window.kh > h or window.kw > w
            or max(top, bottom) >= window.kh or max(left, right) >= window.kw):
        return None
    key = ("max_pool", x.shape, window.kh, window.kw, window.sh, window.sw, top, bottom, left, right)

    def make():
        src, dst = dnn.md((n, c, h, w), _TAG_NHWC), dnn.md((n, c, oh, ow), _TAG_NHWC)

        def create(pd, attr, _):
            return dnn.lib.dnnl_pooling_forward_primitive_desc_create(
                pd, dnn.engine, _FORWARD_INFERENCE, _POOLING_MAX, src, dst, _dims((window.sh, window.sw)),
                _dims((window.kh, window.kw)), _dims((0, 0)), _dims((top, left)), _dims((bottom, right)), attr)
        return _Problem(dnn, (n, oh, ow, c), src, dst, weights=None, weight_tag=None, bias_md=None,
                        activation=None, alpha=0.0, create=create)

    problem = _problem(dnn, key, make)
    if not problem.usable():
        return None
    x = np.ascontiguousarray(x)
    with dnn.lock:
        return problem.run(x, None, None)


def matmul(a, b, bias=None, activation=None, alpha=0.0, transpose_a=False, transpose_b=False):
    """a @ b of 2-D float32 matrices (each transposed first when asked), + `bias`, then `activation`,
    by oneDNN, or None when numpy must serve (as `convolve`)."""
    dnn = library()
    if (dnn is None or a.dtype != np.float32 or b.dtype != np.float32 or a.ndim != 2 or b.ndim != 2
            or (bias is not None and bias.dtype != np.float32)):
        return None
    m, k = a.shape[::-1] if transpose_a else a.shape
    k2, n = b.shape[::-1] if transpose_b else b.shape
    if k != k2 or min(m, k, n) <= 0 or (bias is not None and bias.shape != (n,)):
        return None
    if m * k * n < MATMUL_MIN_WORK:
        return None
    key = ("matmul", a.shape, b.shape, transpose_a, transpose_b, bias is not None, activation, float(alpha))

    def make():
        src, dst = dnn.md((m, k), _TAG_BA if transpose_a else _TAG_AB), dnn.md((m, n), _TAG_AB)
        bias_md = dnn.md((1, n), _TAG_AB) if bias is not None else None

        def create(pd, attr, any_weights):
            return dnn.lib.dnnl_matmul_primitive_desc_create(pd, dnn.engine, src, any_weights, bias_md, dst, attr)
        return _Problem(dnn, (m, n), src, dst, (k, n), _TAG_BA if transpose_b else _TAG_AB, bias_md, activation,
                        alpha, create)

    problem = _problem(dnn, key, make)
    if not problem.usable():
        return None
    return _run(dnn, problem, a, b, bias)


def _problem(dnn, key, make):
    problem = _problems.get(key)
    if problem is None:
        with dnn.lock:
            problem = _problems.get(key)  # another thread may have made it meanwhile
            if problem is None:
                if len(_problems) >= _PROBLEMS_MAX:
                    _problems.clear()
                problem = _problems[key] = make()
    return problem


def _run(dnn, problem, x, f, bias, residual=None, residual_writable=False):
    x, f = np.ascontiguousarray(x), np.ascontiguousarray(f)
    bias = None if bias is None else np.ascontiguousarray(bias)
    with dnn.lock:
        return problem.run(x, f, bias, residual, residual_writable)
