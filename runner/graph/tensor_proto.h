// TensorProto (a Const's `value` attr) -> Tensor.
#pragma once

#include "graph.pb.h"
#include "core/tensor.h"

namespace graphrun {

// Follows TensorFlow's rules: a non-empty tensor_content wins and must hold
// exactly num_elements * itemsize little-endian bytes; otherwise the typed
// field for the dtype is used, the last value repeating to fill the shape,
// zeros when it is empty, extra values ignored. Throws Error on an
// unsupported dtype, a shape that is not fully defined or too large, or a
// tensor_content of the wrong length.
Tensor tensor_from_proto(const graphdef::TensorProto& proto);

// The shape of a TensorShapeProto that must be fully defined.
// `tensor` (plain layout, not a variant) as a TensorProto: tensor_content,
// or string_val for strings.
void tensor_to_proto(const Tensor& tensor, graphdef::TensorProto& proto);

Shape shape_from_proto(const graphdef::TensorShapeProto& proto);

}  // namespace graphrun
