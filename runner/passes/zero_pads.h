// What the Pad-folding passes share (fold_pads.cc into convolutions,
// fold_pads_into_max_pools.cc into MaxPool): which Pad nodes may disappear
// into the one node reading them, and the rewiring when one does.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <optional>

#include "graph/graph.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {

// Larger pads are left to the Pad node, which checks them against the
// tensor size limit; a folded amount must stay far from overflow in the
// window arithmetic (and in oneDNN's int64 dims).
constexpr int64_t kMaxFoldedPad = INT32_MAX;

// [top, bottom, left, right] of node `pad` when it is a zero Pad of H and W
// (NHWC) only, folded where nothing can tell: Pad, or PadV2 whose
// constant_values is a Const zero (every byte 0, so +0.0 for floats); Const
// paddings [4, 2] with batch and channels 0 and every amount at most
// kMaxFoldedPad; the Pad not fed or fetched, its output read once, no
// control dependants.
std::optional<std::array<int64_t, 4>> foldable_zero_pad(const Graph& graph, int pad, const PassContext& context,
                                                        const GraphReaders& readers);

// `reader` (a NodeDef whose input 0 is the Pad) reads the Pad's input
// instead and takes over the Pad's control inputs, so what ran before the
// Pad still runs before it.
void bypass_pad(const graphdef::NodeDef& pad, graphdef::NodeDef& reader);

}  // namespace graphrun
