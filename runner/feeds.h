// --feed NAME=VALUE arguments -> values for the graph's placeholders.
#pragma once

#include <string>
#include <vector>

#include "executor.h"
#include "graph.h"

namespace graphrun {

// NAME is a Placeholder or PlaceholderWithDefault (a trailing ":0" is
// accepted). VALUE is JSON, or "@path" for a .npy file; either is converted
// to the placeholder's dtype only where that changes no value (see
// value_conversion.h). The value's shape must fit the placeholder's `shape`
// attr. Throws UsageError.
FeedMap parse_feeds(const Graph& graph, const std::vector<std::string>& arguments);

}  // namespace graphrun
