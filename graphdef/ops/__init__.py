"""Importing this package registers every op family."""

from graphdef.ops import array, compare, gather_scatter, math, math_unary, matmul, nn, reductions, state  # noqa: F401
from graphdef.ops import activations, batch_norm, conv, manip, pool, random, slicing, strided_slice  # noqa: F401
from graphdef.ops import control_flow, list_ops, rnn_support  # noqa: F401
from graphdef.ops import loop_stacks, tensor_array, tensor_list_concat  # noqa: F401
from graphdef.ops import functional  # noqa: F401
from graphdef.ops import einsum, image, linalg, nms, space_batch  # noqa: F401
from graphdef.ops import div_in_top_k, matrix_diag, reverse_sequence, segments, sparse, unique_partition  # noqa: F401
from graphdef.ops import reverse_pad, scan_topk  # noqa: F401
from graphdef.ops import fused  # noqa: F401
from graphdef.ops import strings, strings_hash, strings_ngrams, strings_print, strings_reduce, strings_regex  # noqa: F401
from graphdef.ops import lookup, parse_example  # noqa: F401
from graphdef.ops import image_codecs  # noqa: F401
from graphdef.ops.registry import REGISTRY  # noqa: F401
from graphdef.ops.state import Variable


def _variable_operators():
    """Variables index and floor-divide through their snapshot, like their other operators (state.py)."""
    for name in ("__getitem__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__"):
        setattr(Variable, name, (lambda n: lambda self, *args: getattr(self._snapshot, n)(*args))(name))


_variable_operators()
