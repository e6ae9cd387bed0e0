#include "passes/zero_pads.h"

#include <vector>

#include "graph/tensor_proto.h"
#include "kernels/axis.h"

namespace graphrun {

namespace {

std::optional<Tensor> const_value(const Graph& graph, const Endpoint& input, const PassContext& context) {
  const GraphNode& node = graph.node(input.node);
  if (!node.is_valid_const() || input.output != 0 || context.fed.count(node.name())) return std::nullopt;
  try {
    return tensor_from_proto(node.def->attr().at("value").tensor());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool all_bytes_zero(const Tensor& value) {
  const auto* bytes = static_cast<const unsigned char*>(value.raw_data());
  for (std::size_t i = 0; i < value.byte_size(); ++i) {
    if (bytes[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<std::array<int64_t, 4>> foldable_zero_pad(const Graph& graph, int pad, const PassContext& context,
                                                        const GraphReaders& readers) {
  const GraphNode& node = graph.node(pad);
  if (node.op() != "Pad" && node.op() != "PadV2") return std::nullopt;
  if (!node.runnable() || context.pinned(node.name()) || readers.data(pad).size() != 1 || readers.control(pad)) {
    return std::nullopt;
  }
  if (node.op() == "PadV2") {
    const std::optional<Tensor> value = const_value(graph, node.inputs[2], context);
    if (!value || value->num_elements() != 1 || !all_bytes_zero(*value)) return std::nullopt;
  }
  const std::optional<Tensor> paddings = const_value(graph, node.inputs[1], context);
  if (!paddings || paddings->shape() != Shape{4, 2}) return std::nullopt;
  std::vector<int64_t> p;
  try {
    p = read_ints(*paddings);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (p[0] || p[1] || p[6] || p[7]) return std::nullopt;  // batch or channels padded
  for (int k = 2; k < 6; ++k) {
    if (p[k] < 0 || p[k] > kMaxFoldedPad) return std::nullopt;
  }
  return std::array<int64_t, 4>{p[2], p[3], p[4], p[5]};
}

void bypass_pad(const graphdef::NodeDef& pad, graphdef::NodeDef& reader) {
  // Data inputs come first, so input 0 is the padded tensor.
  reader.set_input(0, pad.input(0));
  add_control_inputs(pad, reader);
}

}  // namespace graphrun
