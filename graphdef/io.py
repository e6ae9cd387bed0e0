"""tf.io: reading and writing graphs."""

from graphdef.serialize import write_graph  # noqa: F401
