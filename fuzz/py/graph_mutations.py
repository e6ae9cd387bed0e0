"""Structure-aware mutations of a GraphDef: the mistakes a hostile or broken file makes.

Random bytes rarely get past protobuf's parser into the loader and the kernels, so most
mutations edit the parsed GraphDef: attrs of the wrong kind or with extreme values, shapes
with negative, enormous or overflowing dims, tensor_content that disagrees with its shape,
inputs that dangle or loop, duplicate names, op types swapped for other registered ones.
Each mutation edits the GraphDef in place and returns a short label (for statistics).
"""

import random

from graphdef._proto import graph_pb2
from graphdef.ops.registry import REGISTRY

OP_TYPES = sorted(REGISTRY)
DTYPE_ENUMS = [v for v in graph_pb2.DataType.values()] + [0, 99, -1]
HUGE_DIMS = [0, 1, 2, 3, -1, -2, -(2 ** 31), 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 10 ** 6, 65536]
EXTREME_INTS = [0, 1, -1, 2, -2, 3, 7, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 63 - 1, -(2 ** 63), 10 ** 6, 10 ** 12]
EXTREME_FLOATS = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 5e-324, 1e-45,
                  3.4e38, 1e39, 0.5, 2.0 ** 31]
# values that make good Fill dims, Tile multiples, Reshape shapes, Range bounds, axes and indices
INDEX_VECTORS = [[], [0], [-1], [-1, -1], [2, -1], [10 ** 6, 10 ** 6], [2 ** 31, 2 ** 31], [2 ** 62, 4],
                 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                 [0, 0], [3], [1, 2, 3], [99], [-99], [2 ** 31 - 1], [4, 0, 5], [65536, 65536]]
INPUT_NAMES = ["x:99", "nope", "^nope", ":0", "", ":", "a:b", "x:-1", "x:1", "^", "x:00", "x:4294967296",
               "x:99999999999999999999"]
STRINGS = [b"SAME", b"VALID", b"EXPLICIT", b"NCHW", b"NHWC", b"", b"\xff\xfe", b"FOO", b"x" * 300]


def pick_node(g, rng):
    return rng.choice(g.node) if g.node else None


def _node_names(g):
    return [n.name for n in g.node]


# -- attrs ------------------------------------------------------------------------------------

def attr_wrong_kind(g, rng):
    node = pick_node(g, rng)
    if node is None or not node.attr:
        return "noop"
    key = rng.choice(sorted(node.attr))
    set_random_attr(node.attr[key], rng)
    return "attr_wrong_kind"


def set_random_attr(attr, rng):
    which = rng.randrange(9)
    attr.Clear()
    if which == 0:
        attr.i = rng.choice(EXTREME_INTS)
    elif which == 1:
        attr.f = rng.choice(EXTREME_FLOATS)
    elif which == 2:
        attr.s = rng.choice(STRINGS)
    elif which == 3:
        attr.b = rng.random() < 0.5
    elif which == 4:
        attr.type = rng.choice(DTYPE_ENUMS) if rng.random() < 0.9 else 1
    elif which == 5:
        random_shape(attr.shape, rng)
    elif which == 6:
        attr.list.i.extend(rng.choice(EXTREME_INTS) for _ in range(rng.randrange(6)))
    elif which == 7:
        random_tensor(attr.tensor, rng)
    else:
        attr.list.type.extend(rng.choice(DTYPE_ENUMS) for _ in range(rng.randrange(4)))


def attr_extreme_value(g, rng):
    """Keeps each attr's kind, pushes its value to an edge."""
    node = pick_node(g, rng)
    if node is None or not node.attr:
        return "noop"
    attr = node.attr[rng.choice(sorted(node.attr))]
    field = attr.WhichOneof("value")
    if field == "i":
        attr.i = rng.choice(EXTREME_INTS)
    elif field == "f":
        attr.f = rng.choice(EXTREME_FLOATS)
    elif field == "s":
        attr.s = rng.choice(STRINGS)
    elif field == "b":
        attr.b = not attr.b
    elif field == "type":
        attr.type = rng.choice(DTYPE_ENUMS)
    elif field == "shape":
        mutate_shape(attr.shape, rng)
    elif field == "list":
        lst = attr.list
        if lst.i or rng.random() < 0.5:
            choice = rng.randrange(4)
            del lst.i[:]
            if choice == 0:
                lst.i.extend([0] * rng.randrange(1, 6))
            elif choice == 1:
                lst.i.extend(rng.choice(EXTREME_INTS) for _ in range(rng.randrange(7)))
            elif choice == 2:
                lst.i.extend([1, -1, 1, 1])
            else:
                lst.i.extend([1, 2 ** 31, 2 ** 31, 1])
        else:
            lst.f.extend([float("nan")])
    elif field == "tensor":
        mutate_tensor(attr.tensor, rng)
    else:
        return "noop"
    return "attr_extreme"


def attr_remove(g, rng):
    node = pick_node(g, rng)
    if node is None or not node.attr:
        return "noop"
    del node.attr[rng.choice(sorted(node.attr))]
    return "attr_remove"


def attr_add(g, rng):
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    opdef = REGISTRY.get(node.op)
    names = sorted(opdef.attrs) if opdef and opdef.attrs else ["T", "N", "axis", "value"]
    set_random_attr(node.attr[rng.choice(names + ["_junk"])], rng)
    return "attr_add"


# -- shapes and tensors -----------------------------------------------------------------------

def random_shape(shape, rng):
    shape.Clear()
    if rng.random() < 0.1:
        shape.unknown_rank = True
        return
    for _ in range(rng.choice([0, 1, 2, 3, 4, 8, 40])):
        shape.dim.add().size = rng.choice(HUGE_DIMS)


def mutate_shape(shape, rng):
    if not shape.dim or rng.random() < 0.3:
        random_shape(shape, rng)
        return
    kind = rng.randrange(4)
    if kind == 0:
        rng.choice(shape.dim).size = rng.choice(HUGE_DIMS)
    elif kind == 1:  # the product overflows int64 while each dim is modest
        for d in shape.dim:
            d.size = 2 ** 32
        shape.dim.add().size = 2 ** 32
    elif kind == 2:
        del shape.dim[rng.randrange(len(shape.dim))]
    else:
        shape.dim.add().size = rng.choice([1, 2, 0, 2 ** 31])


def random_tensor(tensor, rng):
    tensor.Clear()
    tensor.dtype = rng.choice([1, 2, 3, 9, 10, 4, 6, 5, 19, 23, 22, 17, 7, 8])
    values = rng.choice(INDEX_VECTORS)
    if rng.random() < 0.3:
        pass  # a scalar
    else:
        tensor.tensor_shape.dim.add().size = len(values)
    values = values[:1] if not tensor.tensor_shape.dim else values
    if tensor.dtype in (1, 2, 19):
        getattr(tensor, {1: "float_val", 2: "double_val", 19: "half_val"}[tensor.dtype]).extend(
            [float(v) if tensor.dtype != 19 else (v & 0xFFFF) for v in values])
    elif tensor.dtype == 9:
        tensor.int64_val.extend(max(min(v, 2 ** 63 - 1), -(2 ** 63)) for v in values)
    elif tensor.dtype == 10:
        tensor.bool_val.extend(bool(v) for v in values)
    elif tensor.dtype == 22:
        tensor.uint32_val.extend(v & 0xFFFFFFFF for v in values)
    elif tensor.dtype == 23:
        tensor.uint64_val.extend(v & 0xFFFFFFFFFFFFFFFF for v in values)
    elif tensor.dtype == 7:
        tensor.string_val.extend(b"s" for _ in values)
    else:
        tensor.int_val.extend(max(min(v, 2 ** 31 - 1), -(2 ** 31)) for v in values)


def mutate_tensor(tensor, rng):
    kind = rng.randrange(8)
    if kind == 0:
        mutate_shape(tensor.tensor_shape, rng)
    elif kind == 1 and tensor.tensor_content:  # content shorter or longer than the shape needs
        n = len(tensor.tensor_content)
        tensor.tensor_content = tensor.tensor_content[:rng.randrange(n)] if rng.random() < 0.5 else (
            tensor.tensor_content + bytes(rng.randrange(1, 9)))
    elif kind == 2:
        tensor.dtype = rng.choice(DTYPE_ENUMS)
    elif kind == 3:
        random_tensor(tensor, rng)
    elif kind == 4 and tensor.tensor_content:  # the same bytes, reread: NaNs, huge ints
        data = bytearray(tensor.tensor_content)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.choice([0xFF, 0x7F, 0x80, 0x00])
        tensor.tensor_content = bytes(data)
    elif kind == 5:
        tensor.tensor_content = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 3, 4, 8, 16])))
    elif kind == 6:
        tensor.float_val.extend([float("nan"), float("inf")])
        tensor.int_val.extend([2 ** 31 - 1, -(2 ** 31)])
    else:
        tensor.version_number = rng.choice([0, 1, -1])
    return "tensor"


def const_value(g, rng):
    consts = [n for n in g.node if n.op == "Const"]
    if not consts:
        return "noop"
    node = rng.choice(consts)
    tensor = node.attr["value"].tensor
    if rng.random() < 0.5:
        mutate_tensor(tensor, rng)
    else:  # an index-like value of the dtype the node declares, so it gets past the loader
        dtype = node.attr["dtype"].type or 3
        values = rng.choice(INDEX_VECTORS)
        tensor.Clear()
        tensor.dtype = dtype
        if rng.random() < 0.8:
            tensor.tensor_shape.dim.add().size = len(values)
        else:
            values = values[:1]
        if dtype == 9:
            tensor.int64_val.extend(max(min(v, 2 ** 63 - 1), -(2 ** 63)) for v in values)
        elif dtype in (1, 2):
            (tensor.float_val if dtype == 1 else tensor.double_val).extend(float(v) for v in values)
        elif dtype == 10:
            tensor.bool_val.extend(bool(v) for v in values)
        else:
            tensor.int_val.extend(max(min(v, 2 ** 31 - 1), -(2 ** 31)) for v in values)
    return "const_value"


def shape_attr(g, rng):
    nodes = [n for n in g.node if any(a.WhichOneof("value") == "shape" for a in n.attr.values())]
    if not nodes:
        return "noop"
    node = rng.choice(nodes)
    key = rng.choice(sorted(k for k, a in node.attr.items() if a.WhichOneof("value") == "shape"))
    mutate_shape(node.attr[key].shape, rng)
    return "shape_attr"


# -- inputs and names -------------------------------------------------------------------------

def input_dangling(g, rng):
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    names = _node_names(g)
    text = rng.choice(INPUT_NAMES)
    if text.startswith("x") and names:
        text = rng.choice(names) + text[1:]
    if node.input and rng.random() < 0.7:
        node.input[rng.randrange(len(node.input))] = text
    else:
        node.input.append(text)
    return "input_dangling"


def input_rewire(g, rng):
    """An input pointed at another node: a type clash, a cycle, a self-loop, a control edge."""
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    other = rng.choice(g.node)
    text = other.name if rng.random() < 0.7 else f"{other.name}:{rng.randrange(3)}"
    if rng.random() < 0.15:
        text = "^" + other.name
    if node.input and rng.random() < 0.7:
        node.input[rng.randrange(len(node.input))] = text
    else:
        node.input.append(text)
    return "input_rewire"


def make_cycle(g, rng):
    """The first node with inputs takes the last node as input: a cycle when the last depends on it."""
    withs = [n for n in g.node if n.input]
    if not withs:
        return "noop"
    first = withs[0]
    first.input[0] = g.node[len(g.node) - 1].name
    return "cycle"


def input_remove(g, rng):
    withs = [n for n in g.node if n.input]
    if not withs:
        return "noop"
    node = rng.choice(withs)
    del node.input[rng.randrange(len(node.input))]
    return "input_remove"


def duplicate_name(g, rng):
    if len(g.node) < 2:
        return "noop"
    a, b = rng.sample(range(len(g.node)), 2)
    g.node[a].name = g.node[b].name
    return "duplicate_name"


def rename(g, rng):
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    node.name = rng.choice(["", "_x", "a b", "a:0", "^a", "-a", "x" * 1000, "é", "a/", "/a", "a//b"])
    return "rename"


def swap_op(g, rng):
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    node.op = rng.choice(OP_TYPES) if rng.random() < 0.95 else rng.choice(["", "NoSuchOp", "const"])
    return "swap_op"


# -- nodes ------------------------------------------------------------------------------------

def node_remove(g, rng):
    if len(g.node) < 2:
        return "noop"
    del g.node[rng.randrange(len(g.node))]
    return "node_remove"


def node_duplicate(g, rng):
    node = pick_node(g, rng)
    if node is None:
        return "noop"
    copy = g.node.add()
    copy.CopyFrom(node)
    copy.name = node.name + "_dup" if rng.random() < 0.8 else node.name
    return "node_duplicate"


def node_shuffle(g, rng):
    nodes = list(g.node)
    rng.shuffle(nodes)
    copies = [graph_pb2.NodeDef() for _ in nodes]
    for c, n in zip(copies, nodes):
        c.CopyFrom(n)
    del g.node[:]
    g.node.extend(copies)
    return "node_shuffle"


def node_add(g, rng):
    """A new node of a random registered type over random existing tensors."""
    names = _node_names(g)
    op_type = rng.choice(OP_TYPES)
    opdef = REGISTRY[op_type]
    node = g.node.add()
    node.name = f"fz{rng.randrange(10 ** 6)}"
    node.op = op_type
    for _ in range(len(opdef.inputs) + rng.choice([0, 0, 0, 1, -1])):
        if names:
            node.input.append(rng.choice(names))
    for key, attr in opdef.attrs.items():
        if rng.random() < 0.15:
            continue
        if attr.kind == "type":
            node.attr[key].type = rng.choice([1, 1, 3, 9, 2, 10, 4])
        elif attr.kind == "int":
            node.attr[key].i = rng.choice([0, 1, 2, -1, 3])
        else:
            set_random_attr(node.attr[key], rng)
    return "node_add"


def splice(g, rng, other):
    """A node taken from another seed graph, names and all."""
    if other is None or not other.node:
        return "noop"
    g.node.add().CopyFrom(rng.choice(other.node))
    return "splice"


def chain(g, rng):
    """A long Identity chain on a tensor: deep graphs must not recurse."""
    node = pick_node(g, rng)
    if node is None or not node.op:
        return "noop"
    prev = node.name
    for i in range(rng.choice([10, 100, 3000])):
        n = g.node.add()
        n.name = f"chain{i}_{rng.randrange(10 ** 6)}"
        n.op = "Identity"
        n.input.append(prev)
        n.attr["T"].type = 1
        prev = n.name
    return "chain"


MUTATIONS = [
    (attr_wrong_kind, 6), (attr_extreme_value, 12), (attr_remove, 5), (attr_add, 4),
    (const_value, 16), (shape_attr, 5), (input_dangling, 5), (input_rewire, 6), (make_cycle, 2),
    (input_remove, 3), (duplicate_name, 2), (rename, 2), (swap_op, 10), (node_remove, 3),
    (node_duplicate, 2), (node_shuffle, 1), (node_add, 8), (chain, 1),
]
_FUNCS = [m for m, _ in MUTATIONS]
_WEIGHTS = [w for _, w in MUTATIONS]


def mutate(g, rng, other=None):
    """Applies 1-4 structure-aware mutations; returns their labels."""
    labels = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 3])):
        if other is not None and rng.random() < 0.05:
            labels.append(splice(g, rng, other))
        else:
            labels.append(rng.choices(_FUNCS, _WEIGHTS)[0](g, rng))
    return labels


def mutate_bytes(data, rng):
    """Plain byte mutations of serialized data: flips, overwrites, cuts, inserts, repeats."""
    data = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4, 8])):
        kind = rng.randrange(6)
        if not data:
            data.extend(rng.randbytes(rng.randrange(1, 16)))
            continue
        i = rng.randrange(len(data))
        if kind == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[i] = rng.choice([0, 0xFF, 0x7F, 0x80, 0x01, rng.randrange(256)])
        elif kind == 2:
            del data[i:i + rng.randrange(1, 32)]
        elif kind == 3:
            data[i:i] = rng.randbytes(rng.randrange(1, 16))
        elif kind == 4:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randrange(1, 64)]
        else:
            del data[i:]
    return bytes(data)


def new_rng(seed):
    return random.Random(seed)
