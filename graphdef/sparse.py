"""tf.sparse: SparseTensor and the ops on its parts (TF1 also keeps them at the top level)."""

from graphdef.ops.segments import (sparse_segment_mean as segment_mean,  # noqa: F401
                                   sparse_segment_sqrt_n as segment_sqrt_n, sparse_segment_sum as segment_sum)
from graphdef.ops.sparse import SparseTensor  # noqa: F401
from graphdef.ops.sparse import sparse_reduce_sum as reduce_sum  # noqa: F401
from graphdef.ops.sparse import sparse_reorder as reorder  # noqa: F401
from graphdef.ops.sparse import sparse_tensor_dense_matmul as sparse_dense_matmul  # noqa: F401
from graphdef.ops.sparse import sparse_tensor_to_dense as to_dense  # noqa: F401
