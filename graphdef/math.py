"""tf.math: the elementwise, reduction and segment functions under their tf.math names."""

from graphdef.ops.math import (abs, add, add_n, argmax, argmin, cast, div, divide, exp, floor_div,  # noqa: F401, A004
                               floordiv, floormod, log, log1p, maximum, minimum, mod, multiply, negative, pow,
                               realdiv, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, rsqrt,
                               sigmoid, sign, sqrt, square, squared_difference, subtract, tanh, truediv)
from graphdef.ops.compare import (equal, greater, greater_equal, less, less_equal, logical_and,  # noqa: F401
                                  logical_not, logical_or, not_equal)
from graphdef.ops.activations import softplus  # noqa: F401
from graphdef.ops.slicing import unsorted_segment_sum  # noqa: F401
from graphdef.ops.math_unary import (ceil, cos, floor, is_finite, is_inf, is_nan, reciprocal, round,  # noqa: F401, A004
                                     sin)
from graphdef.ops.scan_topk import cumprod, cumsum, top_k  # noqa: F401
from graphdef.ops.segments import (segment_max, segment_mean, segment_min, segment_prod, segment_sum,  # noqa: F401
                                   unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
                                   unsorted_segment_prod, unsorted_segment_sqrt_n)
from graphdef.ops.unique_partition import bincount  # noqa: F401
from graphdef.ops.div_in_top_k import div_no_nan, in_top_k  # noqa: F401
