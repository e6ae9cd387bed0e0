"""Identity and NoOp removal: consumers read the Identity's input directly.

An Identity of a variable (or anything stateful) stays: in TF1 it is the snapshot that orders
a read before later assignments. An Identity with control inputs stays too: it carries them."""

from graphdef.ops.registry import REGISTRY

FORWARDING = frozenset({"Identity", "Snapshot", "StopGradient", "PreventGradient"})


def _stateful(node):
    opdef = REGISTRY.get(node.op)
    return opdef is None or opdef.stateful


def remove_identities(view, outputs, protected):
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
    return before - len(view.nodes)


remove_identities.name = "identity"
