"""What a mistyped name probably meant: the closest node names, and the model's real outputs.

graphrun-cc (runner/exec/fetches.cc) ranks the same way, so both runners suggest the same names.
"""

from graphdef.wire.model_file import output_names

MAX_SUGGESTED = 3
MAX_OUTPUTS_LISTED = 5


def distance(a, b, limit):
    """Levenshtein distance between `a` and `b`, or limit + 1 once it must exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def closest_names(name, candidates):
    """Up to MAX_SUGGESTED candidates within max(2, len(name) // 3) edits of `name`, nearest first
    (ties in the candidates' order)."""
    limit = max(2, len(name) // 3)
    scored = []
    for position, candidate in enumerate(candidates):
        d = distance(name, candidate, limit)
        if d <= limit:
            scored.append((d, position, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:MAX_SUGGESTED]]


def hint(graph, node_name):
    """"; closest names: 'a', 'b'; the model's outputs: x:0, y:0" for a node name the graph lacks."""
    names = [op.name for op in graph.get_operations()]
    close = closest_names(node_name, names)
    outputs = output_names(graph, names)
    text = ""
    if close:
        text += "; closest names: " + ", ".join(f"'{n}'" for n in close)
    if outputs:
        shown = outputs[:MAX_OUTPUTS_LISTED]
        more = len(outputs) - len(shown)
        text += f"; the model's outputs: {', '.join(shown)}" + (f" and {more} more" if more else "")
    return text
