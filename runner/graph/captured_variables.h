// TF2 SavedModels (tf.saved_model.save, Keras model.export): signatures call
// functions that capture resource variables as trailing arguments, passed
// VarHandleOp nodes of the graph and read inside by ReadVariableOp. As
// graphdef/wire/captured_variables.py does: the SavedObjectGraph's
// concrete functions name the captured objects (bound_inputs), the
// checkpoint's TrackableObjectGraph gives each variable object its key (the
// two matched from the root by children's local names, as TensorFlow's
// loader matches them), and freezing lets each variable's value flow where
// its handle flowed: the functions receiving it are copied with that argument
// typed as the value ("<name>_frozen"), ReadVariableOp becomes Identity, and
// call/If/While type lists follow.
#pragma once

#include <map>
#include <string>

#include "graph.pb.h"
#include "meta_graph.pb.h"
#include "trackable_object_graph.pb.h"

namespace graphrun {

// {graph node (a VarHandleOp): checkpoint key} for every variable a call node
// of the meta graph passes to a concrete function as a bound input.
std::map<std::string, std::string> captured_variables(const graphdef::MetaGraphDef& meta,
                                                      const graphdef::TrackableObjectGraph& checkpoint_objects);

// Rewrites `graph` so the values of `variables` ({node: dtype}, VarHandleOps
// already made Consts) flow where their handles flowed; keeps only the
// functions its nodes still call.
void freeze_resource_flow(graphdef::GraphDef& graph, const std::map<std::string, graphdef::DataType>& variables);

}  // namespace graphrun
