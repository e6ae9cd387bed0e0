"""The steps a Session plan runs: each reads its inputs' slots, calls its kernel and writes its
outputs' slots, then clears the slots nothing reads afterwards. Consecutive steps of one arity
run in one tight loop (segments); a step whose first input is dead after it may let its kernel
write into that input's array (donating steps), and a kernel that asks for it, into its last
input's (a fused convolution's residual)."""

import sys

import numpy as np

from graphdef.ops.kept_buffers import REFCOUNTS_TRUSTED, kept_references

_FREED = object()
# A donating step checks its dead input inline (an array, large enough where the static shape left
# that open, and unshared): a call in between would hold one more reference than _sole_owner counts
_ndarray = np.ndarray
# Below this many elements a result is cheaper to allocate than to check whether its input may
# take it (numpy reuses small blocks; measured: the in-place ufunc wins from about 1,000 float32s)
DONATE_MIN_ELEMENTS = 1024


def _run_binary(v, items):
    for fn, a, b, o, f, g in items:
        v[o] = fn(v[a], v[b])
        v[f] = v[g] = _FREED


def _run_unary(v, items):
    for fn, a, o, f in items:
        v[o] = fn(v[a])
        v[f] = _FREED


def _run_general(v, items):
    for fn, ins, outs, frees in items:
        result = fn(*[v[i] for i in ins])
        if len(outs) == 1:
            v[outs[0]] = result
        elif outs:
            for slot, value in zip(outs, result):
                v[slot] = value
        for f in frees:
            v[f] = _FREED


def may_donate(op, ins, frees):
    """True when the step may write its result into its first input's array: the kernel takes
    out=, and that input, of the output's dtype, is read by nothing after this step (nor fed,
    fetched or a constant: those slots are never freed). Whether no other value shares the
    array is only known when it runs (_sole_owner). Nor does a result too small to gain from it:
    one whose static shape is known and under DONATE_MIN_ELEMENTS, or of unknown rank (a scalar
    chain then pays no check per step); with unknown dims the run checks the array's size."""
    return ("out" in op.opdef.kernel_params and len(op.outputs) == 1 and 1 <= len(ins) <= 2
            and ins[0] in frees and ins[0] not in ins[1:] and op.inputs[0].dtype is op.outputs[0].dtype
            and _may_be_large(op.outputs[0]))


def _may_be_large(tensor):
    shape = tensor.shape
    if shape.dims is None:
        return False
    n = shape.num_elements()
    return n is None or n >= DONATE_MIN_ELEMENTS


def may_donate_last(op, ins, frees):
    """True when the step may let its kernel write into its last input's array (the kernel takes
    last_input_donated=, such as a fused convolution that adds that input, a residual, into its
    output): the same rules as may_donate's, for the last input."""
    return ("last_input_donated" in op.opdef.kernel_params and len(op.outputs) == 1 and len(ins) >= 2
            and ins[-1] in frees and ins[-1] not in ins[:-1] and op.inputs[-1].dtype is op.outputs[0].dtype)


def _sole_owner(x):
    """True when ndarray `x` owns its memory (or is the only view of an array that does) and
    nothing but the caller's slot and local name refers to it, so overwriting it changes no
    other value: numpy's own rule for reusing temporaries. The counts: the slot, the caller's
    local, getrefcount's argument, and this function's parameter; of its base, also the one a
    kernel's kept buffer holds (ops/kept_buffers.py: it writes there only once nothing views it)."""
    if not REFCOUNTS_TRUSTED or type(x) is not np.ndarray or not x.flags.writeable or sys.getrefcount(x) > 4:
        return False
    base = x.base
    return base is None or (type(base) is np.ndarray and base.base is None
                            and sys.getrefcount(base) <= 3 + kept_references(base))


def _run_unary_donating(v, items):
    for fn, plain, a, o, f in items:
        x = v[a]
        v[o] = (fn(x, out=x) if type(x) is _ndarray and x.size >= DONATE_MIN_ELEMENTS and _sole_owner(x)
                else plain(x))
        v[f] = _FREED


def _run_binary_donating(v, items):
    for fn, plain, a, b, o, f, g in items:
        x = v[a]
        v[o] = (fn(x, v[b], out=x) if type(x) is _ndarray and x.size >= DONATE_MIN_ELEMENTS and _sole_owner(x)
                else plain(x, v[b]))
        v[f] = v[g] = _FREED


def _run_general_donating_last(v, items):
    for fn, ins, outs, frees in items:
        x = v[ins[-1]]
        donated = _sole_owner(x)
        del x
        v[outs[0]] = fn(*[v[i] for i in ins], last_input_donated=donated)
        for f in frees:
            v[f] = _FREED


def _plain(kernel):
    """What a step calls when it does not donate: the kernel without its out= wrapper where it
    has one (math.py's _into_first, bound as it is), so a scalar step pays no extra call."""
    return getattr(kernel, "plain", kernel)


def segments(kernels, ins, outs, frees, spare, donating):
    """Groups consecutive steps by arity, so most steps run in a tight loop without a call of ours."""
    segments = []
    for fn, i, o, f, donate in zip(kernels, ins, outs, frees, donating):
        if donate == "last":
            kind, item = _run_general_donating_last, (fn, tuple(i), tuple(o), tuple(f))
        elif donate and len(i) == 2 and len(f) <= 2:
            kind, item = _run_binary_donating, (fn, _plain(fn), i[0], i[1], o[0], *(f + [spare, spare])[:2])
        elif donate and len(i) == 1:
            kind, item = _run_unary_donating, (fn, _plain(fn), i[0], o[0], f[0])
        elif len(o) == 1 and len(i) == 2 and len(f) <= 2:
            kind, item = _run_binary, (_plain(fn), i[0], i[1], o[0], *(f + [spare, spare])[:2])
        elif len(o) == 1 and len(i) == 1 and len(f) <= 1:
            kind, item = _run_unary, (_plain(fn), i[0], o[0], (f + [spare])[0])
        else:
            kind, item = _run_general, (fn, tuple(i), tuple(o), tuple(f))
        if segments and segments[-1][0] is kind:
            segments[-1][1].append(item)
        else:
            segments.append((kind, [item]))
    return segments
