// --feed NAME=VALUE arguments and --feeds archives -> values for the graph's
// placeholders.
#pragma once

#include <string>
#include <vector>

#include "exec/executor.h"
#include "graph/graph.h"

namespace graphrun {

// NAME is a Placeholder or PlaceholderWithDefault (a trailing ":0" is
// accepted). VALUE is JSON, or "@path" for a .npy file; either is converted
// to the placeholder's dtype only where that changes no value (see
// value_conversion.h). The value's shape must fit the placeholder's `shape`
// attr. Each array of an .npz archive in `archives` feeds the placeholder of
// its name by the same rules. A placeholder may be fed only once. Throws
// UsageError.
FeedMap parse_feeds(const Graph& graph, const std::vector<std::string>& arguments,
                    const std::vector<std::string>& archives);

}  // namespace graphrun
