"""Common subexpression elimination: two stateless nodes of one op type, with the same inputs in the
same order and the same attrs, compute the same thing; the later one's readers read the first."""

import hashlib

from graphdef.ops.registry import REGISTRY
from graphdef.optimize.graph_view import input_text, parse_input


def _key(node, inputs):
    attrs = tuple(sorted((k, _digest(v)) for k, v in node.attr.items()))
    return node.op, inputs, attrs


def _digest(value):
    """An attr's bytes, or for a long one (a Const's tensor) their SHA-256: keys holding every
    weight's bytes would double a model's memory. Nodes whose keys match are still compared in
    full before one replaces the other."""
    data = value.SerializeToString(deterministic=True)
    return data if len(data) <= 256 else hashlib.sha256(data).digest()


def eliminate_common_subexpressions(view, outputs, protected):
    seen, moves = {}, {}
    for name in view.topological_order():
        node = view.nodes[name]
        opdef = REGISTRY.get(node.op)
        if opdef is None or opdef.stateful or "Random" in node.op or node.op in ("Placeholder", "NoOp"):
            continue
        # Inputs as they will read once the duplicates found so far are gone.
        inputs = []
        for text in node.input:
            producer, index = parse_input(text)
            inputs.append(input_text(moves.get(producer, (producer,))[0], index))
        if name in protected:  # fed or fetched: neither merged away nor read in another's place (a
            continue           # fed node's value is the feed's, not what its twin computes)
        first = seen.setdefault(_key(node, tuple(inputs)), name)
        if first != name and dict(view.nodes[first].attr) == dict(node.attr):
            moves[name] = (first, None)
    view.redirect_all(moves)
    for name in moves:
        del view.nodes[name]
    return len(moves)


eliminate_common_subexpressions.name = "common subexpressions"
