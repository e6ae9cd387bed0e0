"""tf.io: reading and writing graphs, and the base64 string ops (TensorFlow keeps them here)."""

from graphdef.wire.serialize import write_graph  # noqa: F401
from graphdef import gfile  # noqa: F401,E402 - tf.io.gfile
from graphdef.ops.strings import decode_base64, encode_base64  # noqa: F401,E402
from graphdef.ops.parse_example_api import (FixedLenFeature, FixedLenSequenceFeature,  # noqa: F401,E402
                                            RaggedFeature, VarLenFeature, parse_example, parse_single_example)
from graphdef.image import (decode_and_crop_jpeg, decode_bmp, decode_gif, decode_image,  # noqa: F401,E402 - tf.io's
                            decode_jpeg, decode_png, decode_webp, encode_jpeg, encode_png, extract_jpeg_shape)
