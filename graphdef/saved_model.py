"""tf.compat.v1.saved_model: export a session's graph and variables as a SavedModel, load one back.

    tf.saved_model.simple_save(sess, "export/1", inputs={"x": x}, outputs={"y": y})
    builder = tf.saved_model.Builder("export/2")
    builder.add_meta_graph_and_variables(sess, [tf.saved_model.SERVING], signature_def_map={...})
    builder.save()
    tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], "export/1")

The format and its reading are graphdef.wire.saved_model's; graphrun and graphrun-cc run a
SavedModel directory's serving signature directly.
"""

from types import SimpleNamespace

from graphdef.wire import meta_graph
from graphdef.wire.saved_model import (DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_METHOD_NAME, SERVING, TRAINING,
                                       SavedModelBuilder, load, predict_signature_def, simple_save)

Builder = SavedModelBuilder
builder = SimpleNamespace(SavedModelBuilder=SavedModelBuilder)
loader = SimpleNamespace(load=load)
tag_constants = SimpleNamespace(SERVING=SERVING, TRAINING=TRAINING)
signature_constants = SimpleNamespace(DEFAULT_SERVING_SIGNATURE_DEF_KEY=DEFAULT_SERVING_SIGNATURE_DEF_KEY,
                                      PREDICT_METHOD_NAME=PREDICT_METHOD_NAME, PREDICT_INPUTS="inputs",
                                      PREDICT_OUTPUTS="outputs")
signature_def_utils = SimpleNamespace(predict_signature_def=predict_signature_def)
utils = SimpleNamespace(build_tensor_info=meta_graph.tensor_info)
build_tensor_info = meta_graph.tensor_info

__all__ = ["Builder", "builder", "loader", "simple_save", "load", "tag_constants", "signature_constants",
           "signature_def_utils", "utils", "build_tensor_info", "predict_signature_def", "SERVING", "TRAINING",
           "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME"]
