"""tf.nn: activations and losses."""

from graphdef.ops.math import relu, sigmoid, tanh  # noqa: F401
from graphdef.ops.nn import (l2_loss, log_softmax, sigmoid_cross_entropy_with_logits, softmax,  # noqa: F401
                             softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2,
                             sparse_softmax_cross_entropy_with_logits)
from graphdef.ops.activations import *  # noqa: F401,F403 - its __all__ is tf.nn's activations
from graphdef.ops.batch_norm import batch_normalization, fused_batch_norm  # noqa: F401
from graphdef.ops.conv import (bias_add, conv2d, conv2d_backprop_filter, conv2d_backprop_input,  # noqa: F401
                               conv2d_transpose, depthwise_conv2d, depthwise_conv2d_native)
from graphdef.ops.pool import avg_pool, avg_pool2d, max_pool, max_pool2d  # noqa: F401
from graphdef.ops.scan_topk import top_k  # noqa: F401
from graphdef.ops.div_in_top_k import in_top_k  # noqa: F401 - TF1 order: predictions, targets, k
from graphdef.ops.rnn_cells import bidirectional_dynamic_rnn, dynamic_rnn, rnn_cell  # noqa: F401
