"""Identity and NoOp removal: consumers read the Identity's input directly.

An Identity of a variable (or anything stateful) stays: in TF1 it is the snapshot that orders
a read before later assignments. An Identity with control inputs stays too: it carries them.

A control input on a Const, or on a NoOp with no inputs, orders nothing (neither has an effect
or waits on anything) and goes, as grappler's dependency optimizer drops it. TF2's frozen
graphs need this: their output Identity waits on a NoOp that waits on every variable's
resource Const, which would otherwise keep each original weight alive next to its folded copy."""

from graphdef.ops.registry import REGISTRY

FORWARDING = frozenset({"Identity", "Snapshot", "StopGradient", "PreventGradient"})


def _stateful(node):
    opdef = REGISTRY.get(node.op)
    return opdef is None or opdef.stateful


def _orders_nothing(node):
    return node is not None and (node.op == "Const" or (node.op == "NoOp" and not node.input))


def remove_identities(view, outputs, protected):
    dropped = 0
    for node in view.nodes.values():
        kept = [t for t in node.input if not (t.startswith("^") and t[1:] not in protected
                                               and _orders_nothing(view.nodes.get(t[1:])))]
        if len(kept) != len(node.input):
            dropped += len(node.input) - len(kept)
            del node.input[:]
            node.input.extend(kept)
    before, users, moves = len(view.nodes), view.consumers(), {}
    for name in list(view.nodes):
        node = view.nodes[name]
        if name in protected:
            continue
        if node.op == "NoOp" and not node.input and not users[name]:
            del view.nodes[name]
            continue
        if node.op not in FORWARDING or len(node.input) != 1 or node.input[0].startswith("^"):
            continue
        producer, index = view.data_inputs(node)[0]
        if producer not in view.nodes or _stateful(view.nodes[producer]):
            continue
        moves[name] = (producer, lambda k, index=index: index)
    view.redirect_all(moves)
    for name in moves:
        del view.nodes[name]
    return dropped + before - len(view.nodes)


remove_identities.name = "identity"
