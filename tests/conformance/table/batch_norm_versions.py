"""Conformance cases: FusedBatchNorm and FusedBatchNormV2, the TF 1.x spellings of FusedBatchNormV3."""

import numpy as np

import graphdef as tf

from .base import case, feed
from .conv_pool import BN_MEAN, BN_OFFSET, BN_SCALE, BN_VAR, BN_X, _bn_feeds


@case("fused_batch_norm_v1_v2_training", "FusedBatchNorm and FusedBatchNormV2, is_training=True: the batch mean "
      "and biased variance normalize; outputs 1 and 2 are the mean and the unbiased variance, 3 and 4 the mean "
      "and biased variance, as V3 gives them.")
def _():
    x_, s_, o_ = feed("x", BN_X), feed("scale", BN_SCALE), feed("offset", BN_OFFSET)
    empty = tf.constant(np.zeros(0, np.float32))
    tf.raw_op("FusedBatchNorm", x_, s_, o_, empty, empty, epsilon=0.001, is_training=True, name="v1")
    tf.raw_op("FusedBatchNormV2", x_, s_, o_, empty, empty, epsilon=0.001, is_training=True, U=tf.float32,
              name="v2")
    x = BN_X.astype(np.float64)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    n = x.size // x.shape[3]
    y = BN_SCALE * (x - mean) / np.sqrt(var + np.float64(np.float32(0.001))) + BN_OFFSET
    outputs = {0: y, 1: mean, 2: var * n / (n - 1), 3: mean, 4: var}
    feeds = {k: v for k, v in _bn_feeds().items() if k in ("x", "scale", "offset")}
    return feeds, {f"{node}:{i}": v.astype(np.float32) for node in ("v1", "v2") for i, v in outputs.items()}


@case("fused_batch_norm_v1_inference", "FusedBatchNorm, is_training=False: the given mean and variance "
      "normalize and pass through.")
def _():
    ins = [feed(k, v) for k, v in _bn_feeds().items()]
    tf.raw_op("FusedBatchNorm", *ins, epsilon=0.001, is_training=False, name="bn")
    x = BN_X.astype(np.float64)
    y = BN_SCALE * (x - BN_MEAN) / np.sqrt(BN_VAR.astype(np.float64) + np.float64(np.float32(0.001))) + BN_OFFSET
    return _bn_feeds(), {"bn:0": y.astype(np.float32), "bn:1": BN_MEAN, "bn:2": BN_VAR}
