"""tf.nn: neural-network ops."""

from graphdef.ops.math import relu, sigmoid, tanh  # noqa: F401
