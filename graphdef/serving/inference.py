"""What both transports share: checking a request against the model, queueing it, describing models."""

from graphdef._proto import tfs_pb2
from graphdef.framework import dtypes
from graphdef.serving.tensors import BadRequest, check_feeds, check_fetches, oip_datatype, shown
from graphdef.wire.values import shape_to_proto

SIGNATURE = "serving_default"
PREDICT_METHOD = "tensorflow/serving/predict"
SIGNATURE_DEF_MAP_URL = "type.googleapis.com/tensorflow.serving.SignatureDefMap"
SERVER_NAME = "graphdef"
SERVER_VERSION = "0.1.0"
OIP_EXTENSIONS = ["binary_tensor_data"]


async def infer(repository, name, version, feeds, output_names):
    """(served version, fetch names, {name: ndarray}) for one request; raises BadRequest, NotFound, Overloaded."""
    served = repository.get(name, version)
    runtime = served.runtime
    check_feeds(runtime, feeds)
    fetches = check_fetches(runtime, output_names)
    outputs = await served.batcher.submit(feeds, fetches)
    return served, fetches, outputs


def check_signature(signature_name):
    if signature_name not in ("", SIGNATURE):
        raise BadRequest(f"unknown signature '{shown(signature_name)}'; a frozen graph has one: '{SIGNATURE}'")


def oip_model_metadata(served, versions):
    def entry(spec):
        return {"name": spec.name, "datatype": oip_datatype(spec.dtype),
                "shape": [-1] if spec.shape is None else [-1 if d is None else d for d in spec.shape]}
    runtime = served.runtime
    return {"name": served.name, "versions": [str(v) for v in sorted(versions)], "platform": "tensorflow_graphdef",
            "inputs": [entry(s) for s in runtime.inputs], "outputs": [entry(s) for s in runtime.outputs]}


def _tensor_info(spec, info):
    info.name = spec.tensor_name
    info.dtype = dtypes.as_dtype(spec.dtype).enum
    shape_to_proto(spec.shape, info.tensor_shape)


def signature_def_map(served):
    """TensorFlow Serving's SignatureDefMap of the model: one predict signature, serving_default."""
    result = tfs_pb2.SignatureDefMap()
    signature = result.signature_def[SIGNATURE]
    signature.method_name = PREDICT_METHOD
    for spec in served.runtime.inputs:
        _tensor_info(spec, signature.inputs[spec.name])
    for spec in served.runtime.outputs:
        _tensor_info(spec, signature.outputs[spec.name])
    return result

