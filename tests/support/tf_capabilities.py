"""What the TensorFlow in use can run, for tests that take it as the oracle.

Some of TF's CPU kernels exist only among its oneDNN ones: `_FusedDepthwiseConv2dNative` (without
them a NoOp stands in and the run fails with "Missing 0-th output"), and grouped Conv2D gradients
(Eigen's refuse "filter_size does not have enough elements"). TF_ENABLE_ONEDNN_OPTS=0 turns them
off, as the no-AVX-512 and SSE-only profiles do (tests/support/cpu_profiles.py), and so does TF's default on
some CPUs. A model using them cannot have TensorFlow as its oracle there: the test says so and
skips; graphdef's own runs of the model are checked elsewhere all the same.
"""

import functools

import numpy as np

ONEDNN_ONLY_OPS = frozenset({"_FusedDepthwiseConv2dNative"})
# conformance cases that use a kernel only TF's oneDNN build has, by what they use
ONEDNN_ONLY_CASES = {"conv2d_grouped_backprops": "grouped Conv2D gradients"}


@functools.lru_cache(maxsize=None)
def onednn_kernels_on(tf):
    """True when this TensorFlow runs its oneDNN kernels: a fused depthwise convolution is probed."""
    tf1 = tf.compat.v1
    graph_def = tf1.GraphDef()
    for name, value in (("x", np.ones((1, 3, 3, 1), np.float32)), ("f", np.ones((1, 1, 1, 1), np.float32)),
                        ("b", np.zeros(1, np.float32))):
        node = graph_def.node.add(name=name, op="Const")
        node.attr["dtype"].type = 1
        node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
    node = graph_def.node.add(name="y", op="_FusedDepthwiseConv2dNative", input=["x", "f", "b"])
    node.attr["T"].type = 1
    node.attr["num_args"].i = 1
    node.attr["strides"].list.i.extend([1, 1, 1, 1])
    node.attr["padding"].s = b"VALID"
    node.attr["fused_ops"].list.s.append(b"BiasAdd")
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
    with tf1.Session(graph=graph) as session:
        try:
            session.run("y:0")
        except tf.errors.OpError:
            return False
    return True


def why_tensorflow_cannot_run(tf, graph_def, case_name=None):
    """The reason this TensorFlow cannot run `graph_def` (a GraphDef message), or None."""
    ops = {node.op for node in graph_def.node}
    ops |= {node.op for function in graph_def.library.function for node in function.node_def}
    uses = sorted(ops & ONEDNN_ONLY_OPS) + ([ONEDNN_ONLY_CASES[case_name]] if case_name in ONEDNN_ONLY_CASES else [])
    if uses and not onednn_kernels_on(tf):
        return f"this TensorFlow runs {', '.join(uses)} only with its oneDNN kernels, which are off here"
    return None
