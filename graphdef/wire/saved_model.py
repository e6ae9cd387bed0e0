"""SavedModel directories, TensorFlow's deployment format, written and read without TensorFlow.

    export_dir/saved_model.pb                       a SavedModel: MetaGraphDefs, each with tags,
                                                    a GraphDef, a SaverDef and signatures
    export_dir/variables/variables.index            the variables, a TF checkpoint
    export_dir/variables/variables.data-00000-of-00001

Export (SavedModelBuilder, simple_save) writes TF1-style meta graphs that TensorFlow's loaders,
saved_model_cli and TF Serving accept. Reading picks a meta graph by its tags and either
imports it into a session's graph with the variables restored (loader.load), or freezes one
signature: its variables become Consts holding the checkpoint's values and everything its
outputs do not need goes, giving a plain GraphDef every graphdef runtime runs.
"""

import os

from graphdef._proto import graph_pb2, meta_graph_pb2
from graphdef.framework.graph import get_default_graph
from graphdef.ops.state import global_variables
from graphdef.wire import captured_variables, meta_graph, saved_model_tables, signature_names, tensor_bundle
from graphdef.wire.atomic import write_atomically
from graphdef.wire.checkpoint import Saver
from graphdef.wire.serialize import DIRECTORY_FORMATS, GraphFileError, import_graph_def, ndarray_to_proto

SAVED_MODEL_FILENAME = "saved_model.pb"
VARIABLES_PREFIX = os.path.join("variables", "variables")
SERVING = "serve"
TRAINING = "train"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
MAX_FILE_BYTES = 2 ** 31 - 1  # protobuf's limit for one message


def is_saved_model(path):
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, SAVED_MODEL_FILENAME))


# -- writing ----------------------------------------------------------------------------------

def predict_signature_def(inputs, outputs):
    """tf.saved_model.signature_def_utils.predict_signature_def: {key: Tensor} both ways."""
    signature = meta_graph_pb2.SignatureDef(method_name=PREDICT_METHOD_NAME)
    for key, tensor in inputs.items():
        signature.inputs[key].CopyFrom(meta_graph.tensor_info(tensor))
    for key, tensor in outputs.items():
        signature.outputs[key].CopyFrom(meta_graph.tensor_info(tensor))
    return signature


class SavedModelBuilder:
    """tf.compat.v1.saved_model.Builder: one or more meta graphs of one graph, its variables once."""

    def __init__(self, export_dir):
        self._dir = os.fspath(export_dir)
        if os.path.exists(self._dir) and os.listdir(self._dir):
            raise AssertionError(f"Export directory already exists, and isn't empty. Please choose a different "
                                 f"export directory, or delete all the contents of the specified directory: "
                                 f"{self._dir}")
        self._model = meta_graph_pb2.SavedModel(saved_model_schema_version=1)
        self._variables = None

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, **_ignored):
        """Saves the session's variables and its graph under `tags` (e.g. [tf.saved_model.SERVING])."""
        from_graph = _variables_of(sess.graph)
        if from_graph:
            saver = Saver(from_graph)
            saver.save(sess, os.path.join(self._dir, VARIABLES_PREFIX), write_state=False)
        self._variables = from_graph
        self._add(sess.graph, tags, signature_def_map)

    def add_meta_graph(self, tags, signature_def_map=None, graph=None, **_ignored):
        """Another meta graph of the same graph (the default one), sharing the saved variables."""
        if self._variables is None:
            raise AssertionError("add_meta_graph_and_variables must be called before add_meta_graph")
        self._add(graph if graph is not None else get_default_graph(), tags, signature_def_map)

    def _add(self, graph, tags, signature_def_map):
        variables = _variables_of(graph)
        saved = [(v.op.name, v.op.name, v.dtype.enum) for v in variables]
        self._model.meta_graphs.append(meta_graph.build(graph.as_graph_def(), saved, variables, tags=list(tags),
                                                        signature_defs=signature_def_map))

    def save(self, as_text=False):
        """Writes saved_model.pb (atomically); returns its path."""
        path = os.path.join(self._dir, SAVED_MODEL_FILENAME)
        data = self._model.SerializeToString()
        write_atomically(path, lambda f: f.write(data))
        return path.encode()


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """tf.compat.v1.saved_model.simple_save: a "serve" meta graph with one predict signature."""
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [SERVING], signature_def_map={DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs,
                                                                                                       outputs)})
    builder.save()


def _variables_of(graph):
    with graph.as_default():
        return list(global_variables())


# -- reading ----------------------------------------------------------------------------------

def read(export_dir):
    """The SavedModel proto of `export_dir`; GraphFileError names what is wrong."""
    path = os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME)
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise GraphFileError(f"{path}: {size} bytes is over protobuf's 2 GB limit for one message")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GraphFileError(f"{path}: {e.strerror}") from None
    model = meta_graph_pb2.SavedModel()
    try:
        model.ParseFromString(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
        raise GraphFileError(f"{path}: not a SavedModel (it does not parse as one); re-export it, or point at "
                              "a .pb GraphDef instead") from None
    if not model.meta_graphs:
        raise GraphFileError(f"{path}: a SavedModel without meta graphs")
    return model


def meta_graph_for(model, tags, where):
    """The meta graph whose tags are exactly `tags`; GraphFileError lists the tag sets there are."""
    wanted = set(tags)
    for meta in model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    there = "; ".join(",".join(m.meta_info_def.tags) or "(none)" for m in model.meta_graphs)
    raise GraphFileError(f"{where}: no meta graph tagged {','.join(sorted(wanted))} (it has: {there})")


def load(sess, tags, export_dir):
    """tf.compat.v1.saved_model.loader.load: imports the meta graph tagged `tags` into the
    session's graph, restores its variables, and returns the MetaGraphDef."""
    export_dir = os.fspath(export_dir)
    meta = meta_graph_for(read(export_dir), tags, export_dir)
    with sess.graph.as_default():
        graph_def = meta_graph.without_saver(meta.graph_def)
        saved_model_tables.point_assets(graph_def, meta, export_dir)
        import_graph_def(graph_def, name="")
    values = _variable_values(meta, meta.graph_def, export_dir)
    for node, value in values.items():
        sess._variables[node] = value
    init = [name for name in saved_model_tables.init_ops(meta) if name in sess.graph._ops]
    if init:  # as TensorFlow's loader: the main_op (tables, local variables) runs once loaded
        sess.run([sess.graph._ops[name] for name in init])
    return meta


def _open_variables(export_dir):
    prefix = os.path.join(export_dir, VARIABLES_PREFIX)
    if not tensor_bundle.exists(prefix):
        raise GraphFileError(f"{export_dir}: the SavedModel's variables are missing "
                             f"({tensor_bundle.index_path(prefix)} is not there); copy its variables/ directory "
                             "next to saved_model.pb")
    return prefix, tensor_bundle.Bundle(prefix)


def _variable_values(meta, graph_def, export_dir):
    """{variable node of `graph_def` (VariableV2, VarHandleOp): its checkpoint value}. A TF1
    graph names each variable's key in its saver's RestoreV2 -> Assign edges; a TF2 one in its
    object graph (graphdef.wire.captured_variables)."""
    variables = [n.name for n in graph_def.node if n.op in ("VariableV2", "VarHandleOp")]
    if not variables:
        return {}
    try:
        prefix, bundle = _open_variables(export_dir)
        if captured_variables.is_tf2(meta):
            keys = captured_variables.captured_variables(meta, bundle, prefix)
            unbound = [name for name in variables if name not in keys]
            if unbound:
                raise GraphFileError(f"{export_dir}: variable node(s) {', '.join(unbound[:5])} are not captured by "
                                     "any function of the SavedModel's object graph, so their values are unknown")
        else:
            keys = meta_graph.restored_variables(meta.graph_def)
        keys = {name: keys[name] for name in variables}
        missing = [k for k in keys.values() if k not in bundle.entries]
        if missing:
            raise GraphFileError(f"{prefix}: the checkpoint lacks {', '.join(sorted(missing)[:10])}")
        return {node: bundle.read(key) for node, key in keys.items()}
    except tensor_bundle.CheckpointFormatError as e:
        raise GraphFileError(str(e)) from None


def signature_for(meta, signature_key, where):
    """The SignatureDef `signature_key`; GraphFileError lists the signatures there are."""
    if signature_key not in meta.signature_def:
        there = ", ".join(k for k in sorted(meta.signature_def) if not k.startswith("__")) or "none"
        raise GraphFileError(f"{where}: no signature '{signature_key}' (it has: {there}); choose one with "
                             "--signature")
    return meta.signature_def[signature_key]


def frozen(export_dir, signature_key=DEFAULT_SERVING_SIGNATURE_DEF_KEY, tags=(SERVING,)):
    """(GraphDef, {input key: tensor name}, {output key: tensor name}) for one signature, with
    the variables as Consts, only what the outputs need, and the signature's keys as names
    (graphdef.wire.signature_names)."""
    export_dir = os.fspath(export_dir)
    meta = meta_graph_for(read(export_dir), tags, export_dir)
    signature = signature_for(meta, signature_key, export_dir)
    _check_unique_names(meta.graph_def, export_dir)
    outputs = [info.name.split(":")[0] for info in signature.outputs.values()]
    graph_def = _pruned(meta_graph.without_saver(meta.graph_def), outputs, export_dir)
    initializers = saved_model_tables.table_initializers(meta, graph_def)
    if initializers:  # the tables' initializers stay, under init_all_tables, reading the model's assets
        graph_def = _pruned(meta_graph.without_saver(meta.graph_def), outputs + initializers, export_dir)
        saved_model_tables.add_init_op(graph_def, initializers)
        saved_model_tables.point_assets(graph_def, meta, export_dir)
    values = _variable_values(meta, graph_def, export_dir)
    resources = {}
    for node in graph_def.node:
        if node.name in values:  # a VariableV2, or a resource variable's VarHandleOp
            value = values[node.name]
            if node.op == "VarHandleOp":
                resources[node.name] = ndarray_to_proto(value).dtype
            node.op = "Const"
            del node.input[:]
            node.attr.clear()
            node.attr["dtype"].type = ndarray_to_proto(value).dtype
            ndarray_to_proto(value, node.attr["value"].tensor)
    captured_variables.freeze_resource_flow(graph_def, resources)
    return (graph_def, *signature_names.name_by_keys(graph_def, signature))


def _check_unique_names(graph_def, where):
    """Refuses a meta graph naming two nodes alike, before anything is looked up by name (as
    TensorFlow's importer and graphrun-cc do): pruning and freezing would take one of the two."""
    seen = set()
    for node in graph_def.node:
        if node.name in seen:
            raise GraphFileError(f"{where}: node '{node.name}': the name is not unique")
        seen.add(node.name)


def _pruned(graph_def, outputs, where):
    nodes = {n.name: n for n in graph_def.node}
    needed, stack = set(), [o for o in outputs if o in nodes]
    while stack:
        name = stack.pop()
        if name not in needed:
            needed.add(name)
            for text in nodes[name].input:
                producer = text.lstrip("^").split(":")[0]
                if producer not in nodes:  # graphrun-cc's graph validation, in the same words
                    raise GraphFileError(f"{where}: node '{name}' ({nodes[name].op}): input '{text}' names no "
                                         "node in the graph")
                stack.append(producer)
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in needed)
    return out


def _signature_graph_def(export_dir, signature=None):
    """What a model path naming a SavedModel reads as: a signature (the serving one unless
    named), frozen."""
    return frozen(export_dir, signature or DEFAULT_SERVING_SIGNATURE_DEF_KEY)[0]


DIRECTORY_FORMATS.append((is_saved_model, _signature_graph_def))
