"""TensorList ops and loops carrying TensorLists, against TensorFlow (control flow v1)."""

import inspect

import numpy as np
import pytest

import graphdef
from graphdef.ops.list_ops import MAX_LIST_ITEMS
from tests.support.cflow_oracle import build_ours, check, tf1  # noqa: F401  (tf1 is a fixture)
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401

ARGS = {  # each op's inputs in order, so one program can call graphdef.raw_op and tf.raw_ops alike
    "TensorListReserve": ("element_shape", "num_elements"),
    "TensorListFromTensor": ("tensor", "element_shape"),
    "TensorListGetItem": ("input_handle", "index", "element_shape"),
    "TensorListSetItem": ("input_handle", "index", "item"),
    "TensorListStack": ("input_handle", "element_shape"),
    "TensorListLength": ("input_handle",),
    "TensorListElementShape": ("input_handle",),
}


def _op(api, op_type, *inputs, **attrs):
    if api is graphdef:
        return graphdef.raw_op(op_type, *inputs, **attrs)
    fn = getattr(api.raw_ops, op_type)
    taken = inspect.signature(fn).parameters  # TF infers the attrs its inputs fix (SetItem's element_dtype)
    return fn(**dict(zip(ARGS[op_type], inputs)), **{k: v for k, v in attrs.items() if k in taken})


def _raw_ops_api(api):
    return api if api is graphdef else __import__("tensorflow")


def _scan_program(api):
    """Writes x[t] * 2 + t into a reserved list in a loop, reading x from a list made from it."""
    ops = _raw_ops_api(api)
    x = api.placeholder(api.float32, [4, 3], name="x")
    shape = api.constant([3], api.int32)
    source = _op(ops, "TensorListFromTensor", x, shape)
    target = _op(ops, "TensorListReserve", shape, 4, element_dtype=api.float32)

    def body(t, out):
        item = _op(ops, "TensorListGetItem", source, t, shape, element_dtype=api.float32)
        return t + 1, _op(ops, "TensorListSetItem", out, t, item * 2.0 + api.cast(t, api.float32),
                          element_dtype=api.float32)

    _, done = api.while_loop(lambda t, out: t < 4, body, [api.constant(0), target])
    stacked = _op(ops, "TensorListStack", done, shape, element_dtype=api.float32, num_elements=4)
    return [stacked, _op(ops, "TensorListLength", done), _op(ops, "TensorListElementShape", done,
                                                             shape_type=api.int32)]


@pytest.mark.tf_oracle
def test_loop_carrying_tensor_lists(tf1):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    stacked, length, shape = check(tf1, _scan_program, {"x": x})
    np.testing.assert_array_equal(stacked, x * 2 + np.arange(4, dtype=np.float32)[:, None])
    assert length == 4 and shape.tolist() == [3]


@pytest.mark.tf_oracle
def test_unset_items_read_as_zeros_when_the_shape_is_known(tf_oracle):
    def make():
        lst = graphdef.raw_op("TensorListReserve", [2, 2], 3, element_dtype=graphdef.float32)
        lst = graphdef.raw_op("TensorListSetItem", lst, 1, graphdef.ones([2, 2]), element_dtype=graphdef.float32)
        return [graphdef.raw_op("TensorListStack", lst, [2, 2], element_dtype=graphdef.float32),
                graphdef.raw_op("TensorListGetItem", lst, 2, [2, 2], element_dtype=graphdef.float32)]
    stacked, item = run_both(tf_oracle, make, {})
    assert stacked[1].tolist() == [[1, 1], [1, 1]] and not stacked[0].any() and not item.any()


def test_tensor_lists_cannot_be_fed_or_fetched():
    with graphdef.Graph().as_default() as g:
        lst = graphdef.raw_op("TensorListReserve", [2], 3, element_dtype=graphdef.float32)
        with graphdef.Session(graph=g) as sess:
            with pytest.raises(TypeError, match="cannot fetch .* variant"):
                sess.run(lst)
            with pytest.raises(TypeError, match="cannot feed .* variant"):
                sess.run(graphdef.raw_op("TensorListLength", lst), {lst: np.zeros(3)})


@pytest.mark.parametrize("make, message", [
    (lambda: graphdef.raw_op("TensorListReserve", [2], MAX_LIST_ITEMS + 1, element_dtype=graphdef.float32),
     "num_elements must be in"),
    (lambda: graphdef.raw_op("TensorListReserve", [-1], 2, element_dtype=graphdef.float32), "never set"),
    (lambda: graphdef.raw_op("TensorListReserve", [2], 2, element_dtype=graphdef.float32), "out of range"),
])
def test_bad_list_use_names_the_node(make, message):
    with graphdef.Graph().as_default() as g:
        lst = make()
        index = 5 if message == "out of range" else 0
        item = graphdef.raw_op("TensorListGetItem", lst, index, [-1], element_dtype=graphdef.float32)
        with graphdef.Session(graph=g) as sess, pytest.raises(graphdef.errors.InvalidArgumentError,
                                                               match=f"node '.*' \\(TensorList\\w+\\): .*{message}"):
            sess.run(item)


@pytest.mark.tf_oracle
def test_rnn_support_ops_match_tensorflow(tf_oracle):
    x = np.random.RandomState(0).rand(2, 3, 4) > 0.5

    def make():
        b = graphdef.placeholder(graphdef.bool, [2, 3, 4], name="b")
        f = graphdef.cast(b, graphdef.float32) * graphdef.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        return [graphdef.raw_op("Any", b, [1, 2]), graphdef.raw_op("All", b, 0, keep_dims=True),
                graphdef.raw_op("ReverseV2", f, [0, 2]), graphdef.raw_op("ReverseV2", f, [-2])]
    run_both(tf_oracle, make, {"b": x})
