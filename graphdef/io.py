"""tf.io: reading and writing graphs."""

from graphdef.wire.serialize import write_graph  # noqa: F401
from graphdef import gfile  # noqa: F401,E402 - tf.io.gfile
