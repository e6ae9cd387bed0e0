"""tf.io: reading and writing graphs, and the base64 string ops (TensorFlow keeps them here)."""

from graphdef.wire.serialize import write_graph  # noqa: F401
from graphdef import gfile  # noqa: F401,E402 - tf.io.gfile
from graphdef.ops.strings import decode_base64, encode_base64  # noqa: F401,E402
from graphdef.ops.parse_example_api import (FixedLenFeature, FixedLenSequenceFeature,  # noqa: F401,E402
                                            RaggedFeature, VarLenFeature, parse_example, parse_single_example)
