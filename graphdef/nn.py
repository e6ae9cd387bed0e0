"""tf.nn: activations and losses."""

from graphdef.ops.math import relu, sigmoid, tanh  # noqa: F401
from graphdef.ops.nn import (l2_loss, log_softmax, sigmoid_cross_entropy_with_logits, softmax,  # noqa: F401
                             softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2,
                             sparse_softmax_cross_entropy_with_logits)
