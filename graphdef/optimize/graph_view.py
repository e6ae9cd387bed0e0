"""A mutable view of a GraphDef's nodes for the passes: by name, in file order, with consumers."""

from graphdef._proto import graph_pb2


def parse_input(text):
    """'^node' -> ('node', None); 'node' -> ('node', 0); 'node:2' -> ('node', 2)."""
    if text.startswith("^"):
        return text[1:], None
    name, _, index = text.rpartition(":")
    if name and index.isdigit():
        return name, int(index)
    return text, 0


def input_text(name, index):
    return f"^{name}" if index is None else name if index == 0 else f"{name}:{index}"


class GraphView:
    def __init__(self, graph_def):
        self.nodes = {}
        for node in graph_def.node:
            copy = graph_pb2.NodeDef()
            copy.CopyFrom(node)
            self.nodes[node.name] = copy

    def data_inputs(self, node):
        return [parse_input(i) for i in node.input if not i.startswith("^")]

    def control_inputs(self, node):
        return [i[1:] for i in node.input if i.startswith("^")]

    def consumers(self):
        """name -> [(consumer name, input position, output index or None for control)]."""
        users = {name: [] for name in self.nodes}
        for node in self.nodes.values():
            for k, text in enumerate(node.input):
                name, index = parse_input(text)
                if name in users:
                    users[name].append((node.name, k, index))
        return users

    def sinks(self):
        users = self.consumers()
        return [name for name in self.nodes if not users[name]]

    def redirect(self, old, new, index_map=None):
        """Every use of node `old` now reads `new` (output k -> index_map(k), default k); control
        uses of `old` become control uses of `new`, once."""
        self.redirect_all({old: (new, index_map)})

    def redirect_all(self, moves):
        """redirect() for many nodes in one pass: {old: (new, index_map or None)}. A move's target
        may itself be moved; chains are followed."""
        def resolve(name, index):
            while name in moves:
                name, index_map = moves[name]
                if index is not None and index_map is not None:
                    index = index_map(index)
            return name, index

        for node in self.nodes.values():
            if not any(parse_input(text)[0] in moves for text in node.input):
                continue
            rewritten, seen_controls = [], set()
            for text in node.input:
                name, index = resolve(*parse_input(text))
                if index is None:
                    if name in seen_controls or name == node.name:
                        continue
                    seen_controls.add(name)
                rewritten.append(input_text(name, index))
            del node.input[:]
            node.input.extend(rewritten)

    def recolocate(self, moves):
        """Colocation constraints (attr _class, "loc:@node") on nodes that a pass removed name
        the node that took over their work instead: {removed: replacement}. TF refuses a graph
        whose node asks to be colocated with a node it does not have."""
        for node in self.nodes.values():
            if "_class" not in node.attr:
                continue
            entries = node.attr["_class"].list.s
            for k, entry in enumerate(entries):
                if entry.startswith(b"loc:@") and entry[5:].decode() in moves:
                    entries[k] = b"loc:@" + moves[entry[5:].decode()].encode()

    def topological_order(self):
        """Names with every producer first; nodes in cycles (none outside control flow) last."""
        pending = {name: 0 for name in self.nodes}
        users = {name: [] for name in self.nodes}
        for node in self.nodes.values():
            for text in node.input:
                producer, _ = parse_input(text)
                if producer in self.nodes:
                    pending[node.name] += 1
                    users[producer].append(node.name)
        ready = [name for name, count in pending.items() if count == 0]
        order = []
        while ready:
            name = ready.pop()
            order.append(name)
            for user in users[name]:
                pending[user] -= 1
                if pending[user] == 0:
                    ready.append(user)
        placed = set(order)
        return order + [name for name in self.nodes if name not in placed]

    def to_graph_def(self, original):
        out = graph_pb2.GraphDef()
        out.versions.CopyFrom(original.versions)
        out.library.CopyFrom(original.library)
        out.node.extend(self.nodes.values())
        return out
