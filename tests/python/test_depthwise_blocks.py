"""DepthwiseConv2dNative's numpy kernel works a block of output at a time (several small images
of a batch together, or one large image's rows in bands, the last band short): every way of
cutting the batch into blocks must give TensorFlow's answer."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import windows
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - tf_oracle is a fixture

pytestmark = pytest.mark.tf_oracle

RNG = np.random.default_rng(11)

# (batch, H, W, C, multiplier, stride, padding): sizes chosen against the block size set below
CASES = [
    (5, 9, 9, 8, 1, 1, "SAME"),     # several images a block, the last block short
    (5, 9, 9, 8, 1, 2, "SAME"),     # the same through the column phases of a stride of 2
    (3, 10, 7, 4, 2, 1, "VALID"),   # a multiplier of 2: runs of C
    (2, 41, 23, 8, 1, 1, "SAME"),   # an image larger than a block: bands of rows, the last short
    (2, 41, 23, 8, 1, 2, "VALID"),
    (2, 30, 30, 3, 2, 2, "SAME"),
]


@pytest.mark.parametrize("block_bytes", [1 << 12, 1 << 18])
@pytest.mark.parametrize("n, h, w, c, m, stride, padding", CASES)
def test_depthwise_blocks_match_tensorflow(tf_oracle, monkeypatch, block_bytes, n, h, w, c, m, stride, padding):
    monkeypatch.setattr(windows, "DEPTHWISE_BLOCK_BYTES", block_bytes)
    x = RNG.normal(size=(n, h, w, c)).astype(np.float32)
    f = RNG.normal(size=(3, 3, c, m)).astype(np.float32)

    def make():
        px = tf.placeholder(tf.float32, [None, h, w, c], name="x")
        return [tf.nn.depthwise_conv2d(px, tf.constant(f), strides=[1, stride, stride, 1], padding=padding)]
    run_both(tf_oracle, make, {"x": x})
