"""Dead-node removal: keep only what the outputs and the protected nodes need (strip_unused)."""

from graphdef.optimize.graph_view import parse_input


def prune(view, outputs, protected):
    needed, stack = set(), [n for n in list(outputs) + sorted(protected) if n in view.nodes]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for text in view.nodes[name].input:
            producer, _ = parse_input(text)
            if producer in view.nodes and producer not in needed:
                stack.append(producer)
    dead = [name for name in view.nodes if name not in needed]
    for name in dead:
        del view.nodes[name]
    return len(dead)


prune.name = "prune"
