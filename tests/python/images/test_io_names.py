"""The codecs under tf.io's names as well as tf.image's, as serving code calls them."""

import pytest

import graphdef
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

NAMES = ["decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
         "decode_webp", "encode_jpeg", "encode_png", "extract_jpeg_shape"]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", NAMES)
def test_each_codec_is_under_tf_io_as_in_tensorflow(tf_oracle, name):
    assert hasattr(tf_oracle.io, name)
    assert getattr(graphdef.io, name) is getattr(graphdef.image, name)
