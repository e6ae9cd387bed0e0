"""tf.io: reading and writing graphs, and the base64 string ops (TensorFlow keeps them here)."""

from graphdef.wire.serialize import write_graph  # noqa: F401
from graphdef import gfile  # noqa: F401,E402 - tf.io.gfile
from graphdef.ops.strings import decode_base64, encode_base64  # noqa: F401,E402
