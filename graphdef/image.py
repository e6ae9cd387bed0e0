"""tf.image (tf.compat.v1.image): resizing by TF's legacy resize ops, and non-max suppression."""

from graphdef.ops.image import resize_bilinear, resize_nearest_neighbor  # noqa: F401
from graphdef.ops.nms import combined_non_max_suppression, non_max_suppression  # noqa: F401
