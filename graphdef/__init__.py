"""graphdef: TensorFlow 1.x's graph model (tf.compat.v1) with a portable GraphDef.

    import graphdef as tf
    a = tf.constant(15, name="a"); b = tf.constant(5, name="b")
    res = tf.divide(a * b, a + b, name="Divide")
    with tf.Session() as sess:
        print(sess.run(res))          # 3.75
"""

from graphdef.framework import dtypes, errors
from graphdef.framework.dtypes import (DType, as_dtype, bool_ as bool, double, float16, float32, float64, half,  # noqa: A004
                                       int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from graphdef.framework.graph import (Graph, Operation, Tensor, control_dependencies, get_default_graph, name_scope,
                                      reset_default_graph)
from graphdef.ops.array import (Constant, Placeholder, constant, fill, group, identity, no_op, ones,
                                placeholder, placeholder_with_default, reshape, stop_gradient, transpose, zeros)
from graphdef.ops.math import (abs, add, cast, divide, exp, log, matmul, maximum, minimum, multiply,  # noqa: A004
                               negative, pow, reduce_max, reduce_mean, reduce_sum, relu, sigmoid, sqrt, square,
                               subtract, tanh, truediv)
from graphdef.gradients import gradients
from graphdef.init_ops import (AUTO_REUSE, constant_initializer, get_variable_scope, variable_scope, get_variable,
                               glorot_normal_initializer, glorot_uniform_initializer, ones_initializer, random_normal,
                               random_normal_initializer, random_uniform, random_uniform_initializer,
                               set_random_seed, truncated_normal, truncated_normal_initializer, zeros_initializer)
from graphdef.ops.array import (broadcast_to, one_hot, ones_like, range_ as range, rank, shape_of as shape,  # noqa: A004
                                size, zeros_like)
from graphdef.ops.compare import (equal, greater, greater_equal, less, less_equal, logical_and, logical_not,
                                  logical_or, not_equal)
from graphdef.ops.math import (add_n, clip_by_value, erfc, argmax, argmin, log1p, reduce_min, reduce_prod, sign,
                               squared_difference)
from graphdef.ops.manip import concat, expand_dims, identity_n, split, squeeze, stack, unstack
from graphdef.ops.math import div, floor_div, floordiv, floormod, mod, realdiv, rsqrt
from graphdef.ops.slicing import gather, pad, slice_ as slice, tile, unsorted_segment_sum  # noqa: A004
from graphdef.ops.strided_slice import strided_slice
from graphdef.ops.einsum import einsum
from graphdef.ops.space_batch import batch_to_space_nd, depth_to_space, space_to_batch_nd, space_to_depth
from graphdef.ops.math_unary import ceil, cos, floor, is_finite, is_inf, is_nan, reciprocal, round, sin  # noqa: A004
from graphdef.ops.scan_topk import cumprod, cumsum
from graphdef.ops.gather_scatter import gather_nd, scatter_nd, where
from graphdef.ops.reverse_pad import reverse
from graphdef.ops.registry import convert_to_tensor, raw_op
from graphdef.ops.control_flow_api import case, cond
from graphdef.ops.tensor_array_api import TensorArray, map_fn, scan, while_loop  # while_loop carries TensorArrays
from graphdef.ops.state import (Variable, assign, assign_add, assign_sub, global_variables,
                                global_variables_initializer, trainable_variables, variables_initializer)
from graphdef.wire.serialize import import_graph_def, save, write_graph
from graphdef.client.runner_api import Runner
from graphdef.client.session import InteractiveSession, Session, get_default_session
from graphdef.optimize.at_load import load  # a file's graph, run optimized unless switched off
from graphdef.framework.shapes import TensorShape
from graphdef import io, losses, nn, train  # noqa: E402  (namespaces that mirror tf.nn, tf.io, ...)
from graphdef import graph_util  # noqa: E402  (tf.compat.v1.graph_util: freezing)
from graphdef import math  # noqa: E402  (tf.math)
from graphdef import image  # noqa: E402  (tf.image: resizing, non-max suppression)
from graphdef import summary  # noqa: E402  (tf.summary: FileWriter, scalar, merge, merge_all)
from graphdef import gfile  # noqa: E402  (tf.gfile)
from graphdef import saved_model  # noqa: E402  (tf.saved_model: SavedModel export and loading)
from graphdef import strings  # noqa: E402  (tf.strings)
from graphdef import linalg, lookup, sparse  # noqa: E402  (tf.linalg, tf.lookup, tf.sparse)
from graphdef.ops.lookup_api import tables_initializer  # noqa: E402  (tf.compat.v1.tables_initializer)
from graphdef.ops.strings_print import Assert, Print, print_v2 as print  # noqa: E402, A004  (tf.Assert, tf.Print, tf.print)
from graphdef.ops.strings_hash import fingerprint  # noqa: E402  (tf.fingerprint)
from graphdef.strings import string_split  # noqa: E402  (TF1's tf.string_split)
from graphdef._proto.graph_pb2 import GraphDef, NodeDef  # noqa: E402  (tf.GraphDef, as TF1 code parses .pb files)
# TF1's top-level names of the segment, unique, partition, stitch, sparse, sequence and diagonal ops
from graphdef.ops.segments import (segment_max, segment_mean, segment_min, segment_prod, segment_sum,  # noqa: E402
                                   sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum,
                                   unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod)
from graphdef.ops.unique_partition import (bincount, dynamic_partition, dynamic_stitch, unique,  # noqa: E402
                                           unique_with_counts)
from graphdef.ops.div_in_top_k import div_no_nan  # noqa: E402
from graphdef.ops.sparse import (SparseTensor, sparse_reduce_sum, sparse_reorder,  # noqa: E402
                                 sparse_tensor_dense_matmul, sparse_tensor_to_dense, sparse_to_dense)
from graphdef.ops.reverse_sequence import reverse_sequence  # noqa: E402
from graphdef.ops.matrix_diag import matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag  # noqa: E402

__version__ = "0.1.0"
