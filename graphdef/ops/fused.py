"""TensorFlow's remapper ops: a Conv2D, DepthwiseConv2dNative or MatMul with its BiasAdd and
activation in one node (_FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul).

Only the optimizer's fusion passes write them (graphdef/optimize/passes/fusion.py), in the form
TensorFlow 2.21's CPU kernels run: fused_ops [BiasAdd] or [BiasAdd, activation], one arg (the
bias), float32; and, in the copy only graphdef's Session runs, _FusedConv2D with a residual added
after the bias (residual_fusion.py). The kernels are the unfused chain's: the product by the
Conv2D, DepthwiseConv2dNative or MatMul kernel, then the bias and the residual added and the
activation applied in place, with the element rules of the BiasAdd, AddV2 and activation kernels:
a fused node gives the chain's bits.
"""

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes
from graphdef.framework.numerics import tensor_ulps
from graphdef.framework.shapes import TensorShape, broadcast, show
from graphdef.ops.conv import conv2d_kernel, depthwise_kernel, infer_conv2d, infer_depthwise, padding_attrs, spatial
from graphdef.ops.matmul import _infer_matmul, _matmul
from graphdef.ops.registry import Attr, NOT_DIFFERENTIABLE, build, define
from graphdef.ops.windows import window_attrs

DT_FLOAT = 1  # DataType enum of float32, for the TArgs attr

# The activations each fused op's TensorFlow CPU kernel accepts after its BiasAdd.
ACTIVATIONS = {
    "_FusedConv2D": ("Relu", "Relu6", "Elu", "LeakyRelu"),
    "_FusedDepthwiseConv2dNative": ("Relu", "Relu6", "Elu"),
    "_FusedMatMul": ("Relu", "Relu6", "Elu", "LeakyRelu"),
}


def _fused_attrs():
    return {"T": Attr("type", allowed=frozenset({dtypes.float32})), "num_args": Attr("int"),
            "fused_ops": Attr("list(string)", ()), "epsilon": Attr("float", 0.0001),
            "leakyrelu_alpha": Attr("float", 0.2)}


def epilogue_error(op_type, fused_ops, num_args):
    """Why this fused_ops / num_args pair is not one this op runs, or None. Besides TF's forms,
    _FusedConv2D takes [BiasAdd, Add] (+ activation) with num_args 2, a residual added after the bias,
    as graphrun-cc does: graphdef's optimizer writes it only into a graph its own runtimes run."""
    ops = tuple(fused_ops)
    allowed = ACTIVATIONS[op_type]
    residual = op_type == "_FusedConv2D" and num_args == 2 and ops[1:2] == ("Add",)
    tail = ops[2:] if residual else ops[1:]
    if (num_args != (2 if residual else 1) or not ops or ops[0] != "BiasAdd" or len(tail) > 1
            or (tail and tail[0] not in allowed)):
        also = (", or for _FusedConv2D [BiasAdd, Add] and [BiasAdd, Add, activation] with num_args 2"
                if op_type == "_FusedConv2D" else "")
        return (f"fused_ops {list(ops)} with num_args {num_args} is not supported: need [BiasAdd] or "
                f"[BiasAdd, one of {', '.join(allowed)}] and num_args 1{also}")
    return None


def _activation_of(fused_ops):
    last = fused_ops[-1] if len(fused_ops) > 1 else None
    return None if last in (None, "Add") else last


def _infer_fused(op_type, infer_product):
    def infer(ctx):
        error = epilogue_error(op_type, ctx.attrs["fused_ops"], ctx.attrs["num_args"])
        if error:
            raise ctx.error(error)
        wanted = 2 + ctx.attrs["num_args"]
        if len(ctx.inputs) != wanted:
            raise ctx.error(f"needs {wanted} inputs (input, filter, bias{', residual' if wanted == 4 else ''}), "
                            f"got {len(ctx.inputs)}")
        [out] = infer_product(ctx)
        bias = ctx.shape(2)
        if bias.ndims not in (None, 1):
            raise ctx.error(f"the bias must be 1-D, got shape {show(bias)}")
        channels = out.dims[-1] if out.dims else None
        size = bias.dims[0] if bias.dims else None
        if channels is not None and size is not None and channels != size:
            raise ctx.error(f"the bias {show(bias)} does not match the {channels} output channels")
        if out.dims is not None and channels is None and size is not None:
            out = TensorShape(out.dims[:-1] + (size,))
        if wanted == 4:  # the residual is added as AddV2 adds: with broadcasting
            both = broadcast(out, ctx.shape(3))
            if both is None:
                raise ctx.error(f"the residual {show(ctx.shape(3))} does not broadcast to the product {show(out)}")
            return [both]
        return [out]
    return infer


def apply_epilogue(out, args, fused_ops, alpha):
    """The rest of the chain on the product `out` (an array the kernel just made, so written in
    place): + the bias args[0], + the residual args[1] if any, then the activation."""
    bias = np.asarray(args[0])
    if bias.ndim != 1 or bias.shape[0] != out.shape[-1] or bias.dtype != out.dtype:
        raise ValueError(f"the bias {bias.dtype.name}{show(bias.shape)} must be 1-D, of the output's dtype and "
                         f"match its last dim ({out.dtype.name}{show(out.shape)})")
    np.add(out, bias, out=out)
    if len(args) == 2:  # as AddV2: broadcasting, into a new array when the shape grows
        residual = np.asarray(args[1])
        grows = np.broadcast_shapes(out.shape, residual.shape) != out.shape
        out = np.add(out, residual, out=None if grows else out)
    return apply_activation(out, _activation_of(fused_ops), alpha)


def apply_activation(out, activation, alpha):
    """The activation fused_ops names (or None), in place on `out`."""
    # clip: one pass, and numpy's fastest (about twice np.maximum's speed); NaN propagates, as
    # in the Relu and Relu6 kernels, whose numerics leave the sign of a zero free (-0.0 stays -0.0)
    if activation == "Relu":
        np.clip(out, 0, np.inf, out=out)
    elif activation == "Relu6":
        np.clip(out, 0, 6, out=out)
    elif activation == "Elu":
        negative = out < 0
        np.copyto(out, np.exp(out) - 1, where=negative)  # exp - 1 as the Elu kernel (TF's formula)
    elif activation == "LeakyRelu":
        # the attr is a float32 on the wire, as the LeakyRelu kernel reads it
        np.multiply(out, np.float32(alpha).astype(out.dtype), out=out, where=~(out > 0))
    return out


def _fused_conv2d(input, filter, *args, strides, padding, explicit_paddings, data_format,  # noqa: A002
                  dilations, fused_ops, num_args, leakyrelu_alpha):
    _check_args("_FusedConv2D", args, fused_ops, num_args)
    out = conv2d_kernel(input, filter, strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                        data_format=data_format, dilations=dilations)
    return apply_epilogue(out, args, fused_ops, leakyrelu_alpha)


def _fused_depthwise(input, filter, *args, strides, padding, explicit_paddings, data_format,  # noqa: A002
                     dilations, fused_ops, num_args, leakyrelu_alpha):
    _check_args("_FusedDepthwiseConv2dNative", args, fused_ops, num_args)
    out = depthwise_kernel(input, filter, strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                           data_format=data_format, dilations=dilations)
    return apply_epilogue(out, args, fused_ops, leakyrelu_alpha)


def _fused_matmul(a, b, *args, transpose_a, transpose_b, fused_ops, num_args, leakyrelu_alpha):
    _check_args("_FusedMatMul", args, fused_ops, num_args)
    out = _matmul(np.asarray(a), np.asarray(b), transpose_a=transpose_a, transpose_b=transpose_b)
    return apply_epilogue(out, args, fused_ops, leakyrelu_alpha)


def _check_args(op_type, args, fused_ops, num_args):
    error = epilogue_error(op_type, fused_ops, num_args)
    if error is None and len(args) != num_args:
        error = f"needs {num_args} args (the bias{', the residual' if num_args == 2 else ''}), got {len(args)}"
    if error:
        raise ValueError(error)


FUSED_CONV2D = define(
    "_FusedConv2D", "input: T, filter: T, args: num_args*T -> output: T",
    doc="Conv2D, then BiasAdd with args[0], then the optional activation fused_ops names (TF's remapper op).",
    attrs={**_fused_attrs(), "use_cudnn_on_gpu": Attr("bool", True), **window_attrs()},
    infer=_infer_fused("_FusedConv2D", infer_conv2d), kernel=_fused_conv2d, grad=NOT_DIFFERENTIABLE,
    numerics=tensor_ulps(8))

FUSED_DEPTHWISE_CONV2D_NATIVE = define(
    "_FusedDepthwiseConv2dNative", "input: T, filter: T, args: num_args*T -> output: T",
    doc="DepthwiseConv2dNative, then BiasAdd with args[0], then the optional activation (TF's remapper op).",
    attrs={**_fused_attrs(), **window_attrs()},
    infer=_infer_fused("_FusedDepthwiseConv2dNative", infer_depthwise), kernel=_fused_depthwise,
    grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(8))

FUSED_MATMUL = define(
    "_FusedMatMul", "a: T, b: T, args: num_args*T -> product: T",
    doc="MatMul, then BiasAdd with args[0], then the optional activation fused_ops names (TF's remapper op).",
    attrs={**_fused_attrs(), "transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False)},
    infer=_infer_fused("_FusedMatMul", _infer_matmul), kernel=_fused_matmul, grad=NOT_DIFFERENTIABLE,
    numerics=tensor_ulps(8))


# -- builders (the optimizer writes these nodes itself; these are for tests and hand-made graphs) --

def _fused(op_type, inputs, bias, activation, leakyrelu_alpha, name, attrs):
    fused_ops = ["BiasAdd"] + ([activation] if activation else [])
    error = epilogue_error(op_type, fused_ops, 1)
    if error:
        raise ValueError(f"{op_type}: {error}")
    attrs = {**attrs, "fused_ops": fused_ops, "num_args": 1, "leakyrelu_alpha": float(leakyrelu_alpha)}
    if op_type == "_FusedConv2D":  # TF 2.21 types the args as a list (TArgs); graphdef reads num_args*T
        attrs["TArgs"] = graph_pb2.AttrValue(list=graph_pb2.AttrValue.ListValue(type=[DT_FLOAT]))
    return build(op_type, [*inputs, [bias]], name=name, default_name=op_type, attrs=attrs).outputs[0]


def fused_conv2d(input, filter, bias, strides, padding, activation=None, dilations=None,  # noqa: A002
                 leakyrelu_alpha=0.2, name=None):
    """_FusedConv2D: conv2d (tf.nn.conv2d's strides, padding and dilations), + bias, then `activation`."""
    attrs = {"strides": spatial(strides, "strides"), "dilations": spatial(dilations, "dilations"),
             **padding_attrs(padding)}
    return _fused("_FusedConv2D", [input, filter], bias, activation, leakyrelu_alpha, name, attrs)


def fused_depthwise_conv2d(input, filter, bias, strides, padding, activation=None, dilations=None,  # noqa: A002
                           name=None):
    """_FusedDepthwiseConv2dNative: depthwise_conv2d_native, + bias, then `activation` (SAME or VALID)."""
    attrs = {"strides": spatial(strides, "strides"), "dilations": spatial(dilations, "dilations"),
             "padding": padding}
    return _fused("_FusedDepthwiseConv2dNative", [input, filter], bias, activation, 0.2, name, attrs)


def fused_matmul(a, b, bias, activation=None, transpose_a=False, transpose_b=False, leakyrelu_alpha=0.2,
                 name=None):
    """_FusedMatMul: matmul, + bias, then `activation`."""
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}
    return _fused("_FusedMatMul", [a, b], bias, activation, leakyrelu_alpha, name, attrs)
