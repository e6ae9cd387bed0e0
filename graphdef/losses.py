"""tf.losses (tf.compat.v1.losses): scalar losses over a batch."""

from graphdef.framework.graph import get_default_graph
from graphdef.ops.math import reduce_mean, squared_difference
from graphdef.ops.registry import convert_to_tensor


def mean_squared_error(labels, predictions, weights=1.0, scope=None):
    """The mean of (predictions - labels) ** 2, times `weights` (a scalar)."""
    with get_default_graph().name_scope(scope or "mean_squared_error"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels, dtype=predictions.dtype)
        loss = reduce_mean(squared_difference(predictions, labels))
        return loss if weights == 1.0 else loss * weights
