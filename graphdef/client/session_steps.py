"""The steps a numpy-engine plan runs: each reads its inputs' slots, calls its kernel and writes
its outputs' slots, then clears the slots nothing reads afterwards. Consecutive steps of one
arity run in one tight loop (segments), so a chain of small ops pays no call of ours per step."""

_FREED = object()


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


def _plain(kernel):
    """The kernel without its out= wrapper where it has one (math.py's _into_first): the numpy
    engine never writes into an input, so a step pays no extra call."""
    return getattr(kernel, "plain", kernel)


def segments(kernels, ins, outs, frees, spare):
    """Groups consecutive steps by arity, so most steps run in a tight loop without a call of ours."""
    segments = []
    for fn, i, o, f in zip(kernels, ins, outs, frees):
        if len(o) == 1 and len(i) == 2 and len(f) <= 2:
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
