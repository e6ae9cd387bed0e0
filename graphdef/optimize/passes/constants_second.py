"""Constants second: Mul, Add and AddV2 that read a Const first read it second instead.

For the copy only graphdef's Session runs. The Session lets a kernel write its result into its
first input's array when nothing reads that array afterwards (graphdef/client/session_steps.py);
a Const's array is never given away, so `0.5 * x` makes a new array where `x * 0.5` can reuse
x's. Keras' tanh GELU is four such products and sums of a scalar with a [batch, T, 4 * width]
activation. The swap changes no value: IEEE 754 multiplication and addition are commutative
(bit for bit, signed zeros included; only which NaN's payload survives may differ, and the
numerics policy leaves payloads unspecified), integer wraparound is too, and broadcasting gives
one shape either way.
"""

from graphdef.optimize.graph_view import parse_input

COMMUTATIVE = frozenset({"Mul", "Add", "AddV2"})
DT_STRING = 7  # TF's Add also joins strings, which does not commute


def constants_second(view, outputs, protected):
    swapped = 0
    for node in view.nodes.values():
        if (node.op not in COMMUTATIVE or node.name in protected or len(node.input) < 2
                or "T" not in node.attr or node.attr["T"].type == DT_STRING):
            continue
        first, second = node.input[0], node.input[1]
        if first.startswith("^") or second.startswith("^"):
            continue
        if _is_const(view, first) and not _is_const(view, second):
            node.input[0], node.input[1] = second, first
            swapped += 1
    return swapped


constants_second.name = "constants second"


def _is_const(view, text):
    producer = view.nodes.get(parse_input(text)[0])
    return producer is not None and producer.op == "Const"
