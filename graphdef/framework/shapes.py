"""Static shapes: known or unknown rank, each dim an int or None (unknown)."""


class TensorShape:
    """A static shape as TensorFlow reports it: `dims` is a tuple of int|None, or None for unknown rank."""

    __slots__ = ("dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        elif dims is not None:
            dims = tuple(None if d is None or d == -1 else int(d) for d in dims)
            if any(d is not None and d < 0 for d in dims):
                raise ValueError(f"negative dimension in shape {list(dims)}")
        self.dims = dims

    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def is_fully_defined(self):
        return self.dims is not None and None not in self.dims

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self.dims:
            n *= d
        return n

    def as_list(self):
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self.dims)

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return True
        if len(self.dims) != len(other.dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other):
        """The most specific shape compatible with both; raises ValueError if they conflict."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"shapes {self} and {other} are not compatible")
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def __len__(self):
        if self.dims is None:
            raise ValueError("cannot take the length of a shape with unknown rank")
        return len(self.dims)

    def __iter__(self):
        if self.dims is None:
            raise ValueError("cannot iterate over a shape with unknown rank")
        return iter(self.dims)

    def __getitem__(self, key):
        if self.dims is None:
            return None if isinstance(key, int) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self.dims[key])
        return self.dims[key]

    def __eq__(self, other):
        try:
            return self.dims == as_shape(other).dims
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self):
        return hash(self.dims)

    def __str__(self):  # TensorFlow's form: (2, None), (3,), ()
        return "<unknown>" if self.dims is None else str(self.dims)

    def __repr__(self):
        return "TensorShape(None)" if self.dims is None else f"TensorShape({list(self.dims)})"


def as_shape(value):
    return value if isinstance(value, TensorShape) else TensorShape(value)


def show(shape):
    """The form error messages use: [2,?,3], [] for a scalar, <unknown> for unknown rank."""
    dims = shape.dims if isinstance(shape, TensorShape) else shape
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def broadcast(a, b):
    """numpy's broadcasting rule on static shapes; None if the two can never broadcast."""
    if a.dims is None or b.dims is None:
        return TensorShape(None)
    x, y = a.dims, b.dims
    if x == y:  # the common case of an elementwise op: every dim is its own answer below
        return a
    n = max(len(x), len(y))
    x = (1,) * (n - len(x)) + x
    y = (1,) * (n - len(y)) + y
    out = []
    for p, q in zip(x, y):
        if p == 1:
            out.append(q)
        elif q == 1 or p == q:
            out.append(p)
        elif p is None or q is None:
            out.append(p if q is None else q)
        else:
            return None
    return TensorShape(out)
