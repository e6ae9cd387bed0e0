"""graphrun inspect of a SavedModel directory: each meta graph's tags and signatures with
their inputs and outputs (key, dtype, shape, tensor name), in the words of
`saved_model_cli show --all` (text) or as one JSON document; graphrun-cc inspect prints the
same (runner/cli/inspect_saved_model.cc)."""

from graphdef._proto import graph_pb2
from graphdef.wire import saved_model


def _dtype(enum):
    return graph_pb2.DataType.Name(enum) if enum in graph_pb2.DataType.values() else str(enum)


def _dims(shape):
    return None if shape.unknown_rank else [d.size for d in shape.dim]


def _shape_text(dims):
    if dims is None:
        return "unknown_rank"
    return "(" + ", ".join(str(d) for d in dims) + ")"  # saved_model_cli writes a vector as "(2)"


def _tensors(infos):
    return [{"key": key, "dtype": _dtype(infos[key].dtype), "shape": _dims(infos[key].tensor_shape),
             "name": infos[key].name} for key in sorted(infos)]


def listing(export_dir):
    """{"saved_model", "meta_graphs": [{"tags", "signatures": [{key, method_name, inputs, outputs}]}]};
    GraphFileError if saved_model.pb is unreadable."""
    model = saved_model.read(export_dir)
    return {"saved_model": str(export_dir), "meta_graphs": [
        {"tags": list(meta.meta_info_def.tags),
         "signatures": [{"key": key, "method_name": meta.signature_def[key].method_name,
                         "inputs": _tensors(meta.signature_def[key].inputs),
                         "outputs": _tensors(meta.signature_def[key].outputs)}
                        for key in sorted(meta.signature_def)]}
        for meta in model.meta_graphs]}


def format_listing(facts):
    lines = []
    for meta in facts["meta_graphs"]:
        lines += ["", f"MetaGraphDef with tag-set: '{', '.join(meta['tags'])}' contains the following SignatureDefs:"]
        for signature in meta["signatures"]:
            lines += ["", f"signature_def['{signature['key']}']:"]
            for side, word in (("inputs", "input"), ("outputs", "output")):
                lines.append(f"  The given SavedModel SignatureDef contains the following {word}(s):")
                for t in signature[side]:
                    lines += [f"    {side}['{t['key']}'] tensor_info:", f"        dtype: {t['dtype']}",
                              f"        shape: {_shape_text(t['shape'])}", f"        name: {t['name']}"]
            lines.append(f"  Method name is: {signature['method_name']}")
    return "\n".join(lines) + "\n"
