"""Conformance cases: variables: one run proves the state logic through control dependencies."""

import graphdef as tf

from .base import case, f32, i32, feed


# -- variables: one run proves the state logic through control dependencies --------------

@case("variable_assign_add", "VariableV2 initialised by its Assign (a control input), then AssignAdd; fetch the sum.")
def _():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.assign_add(v, tf.constant([10.0, 20.0]), name="y")
    return {}, {"y:0": f32(11.0, 22.0)}


@case("variable_assign_sub", "An int32 VariableV2 initialised, then AssignSub of a fed value; fetch the difference.")
def _():
    v = tf.Variable(tf.constant([5, 5, -2147483648]), name="v")
    d = i32(1, 7, 1)
    # The placeholder stays outside the block: TensorFlow loses the ordering when a fed
    # placeholder carries a control input, and reports the variable uninitialised.
    pd = feed("d", d)
    with tf.control_dependencies([v.initializer]):
        tf.assign_sub(v, pd, name="y")
    return {"d": d}, {"y:0": i32(4, -2, 2147483647)}


@case("variable_chain",
      "Initialise, Assign a new value, AssignAdd, AssignSub, then read: each step a control input of the next.")
def _():
    v = tf.Variable(tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="v")
    with tf.control_dependencies([v.initializer]):
        set_ = tf.assign(v, tf.constant([[10.0, 20.0], [30.0, 40.0]]), name="set")
    with tf.control_dependencies([set_]):
        inc = tf.assign_add(v, tf.constant([[0.5, 0.5], [0.5, 0.5]]), name="inc")
    with tf.control_dependencies([inc]):
        dec = tf.assign_sub(v, tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="dec")
    with tf.control_dependencies([dec]):
        # Read the VariableV2 ref itself: `v` would be the snapshot v/read, which has no
        # control inputs and may run before the chain (in TF 1.x too).
        tf.identity(v.op.outputs[0], name="final")
    return {}, {"final:0": f32([9.5, 18.5], [27.5, 36.5])}
