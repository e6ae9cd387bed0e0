"""tf.image (tf.compat.v1.image): resizing by TF's legacy resize ops."""

from graphdef.ops.image import resize_bilinear, resize_nearest_neighbor  # noqa: F401
