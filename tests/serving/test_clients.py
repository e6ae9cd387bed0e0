"""graphrun serve called by real clients nobody here wrote: tritonclient (HTTP and gRPC, the Open
Inference Protocol) and tensorflow-serving-api (TF Serving's gRPC PredictionService), plus plain
REST calls as curl makes them, with each runtime serving (--runtime cc and python). Every answer is
checked against graphdef's Session run in process (its bits when Python serves, the numerics
policy's tolerance when graphrun-cc's kernels do), and TF Serving's Predict against TensorFlow itself."""

import json
import os

import numpy as np
import pytest

from tests.support import serve_helpers as helpers

pytestmark = pytest.mark.slow

MLP = helpers.ROOT / "tests" / "models" / "mlp.pb"
CNN = helpers.ROOT / "tests" / "models" / "cnn.pb"

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
httpclient = pytest.importorskip("tritonclient.http", reason="make test installs tritonclient (the oracle extra)")
grpcclient = pytest.importorskip("tritonclient.grpc", reason="make test installs tritonclient (the oracle extra)")


@pytest.fixture(scope="module", params=helpers.RUNTIMES)
def served(request, tmp_path_factory):
    helpers.ensure_library()
    server = helpers.start(MLP, tmp_path_factory.mktemp("serve"), "--runtime", request.param)
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def batch():
    return np.random.default_rng(7).standard_normal((5, 16)).astype(np.float32)


def check(served, got, batch):
    helpers.assert_served_answer(served, got, MLP, {"x": batch}, "output/score:0")


def test_the_server_says_which_runtime_serves(served):
    assert f"graphrun serve: runtime {served.runtime} (" in served.log()
    kind = {"cc": "graphrun-cc", "python": "graphdef-python"}[served.runtime]
    assert f"serving model mlp version 1 from {MLP} ({kind}, batching off)" in served.log()


@pytest.mark.tf_oracle
def test_the_protocol_messages_have_the_real_clients_field_numbers():
    """Our proto/serving messages against the clients' own compiled descriptors, field by field."""
    from graphdef._proto import oip_pb2, tfs_pb2
    from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2
    from tritonclient.grpc import service_pb2

    def same(ours, theirs, path):
        for field in ours.fields:
            other = theirs.fields_by_name.get(field.name)
            assert other is not None, f"{path}.{field.name} is not in the real protocol"
            assert (field.number, field.type, field.is_repeated) == (other.number, other.type, other.is_repeated), \
                f"{path}.{field.name}"
            if field.message_type is not None and not field.message_type.full_name.startswith("google."):
                same(field.message_type, other.message_type, f"{path}.{field.name}")

    for name in ("ServerLiveResponse", "ServerReadyResponse", "ModelReadyRequest", "ModelReadyResponse",
                 "ServerMetadataResponse", "ModelMetadataRequest", "ModelMetadataResponse", "ModelInferRequest",
                 "ModelInferResponse"):
        same(getattr(oip_pb2, name).DESCRIPTOR, getattr(service_pb2, name).DESCRIPTOR, name)
    for ours, theirs in ((tfs_pb2.PredictRequest, predict_pb2.PredictRequest),
                         (tfs_pb2.PredictResponse, predict_pb2.PredictResponse),
                         (tfs_pb2.GetModelMetadataRequest, get_model_metadata_pb2.GetModelMetadataRequest),
                         (tfs_pb2.GetModelMetadataResponse, get_model_metadata_pb2.GetModelMetadataResponse),
                         (tfs_pb2.SignatureDefMap, get_model_metadata_pb2.SignatureDefMap)):
        same(ours.DESCRIPTOR, theirs.DESCRIPTOR, ours.DESCRIPTOR.name)


@pytest.mark.parametrize("binary", [True, False], ids=["binary-tensors", "json-data"])
def test_tritonclient_http(served, batch, binary):
    client = httpclient.InferenceServerClient(f"127.0.0.1:{served.http}")
    assert client.is_server_live() and client.is_server_ready() and client.is_model_ready("mlp")
    meta = client.get_model_metadata("mlp")
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 16]}]
    assert meta["outputs"] == [{"name": "output/score", "datatype": "FP32", "shape": [-1, 1]}]
    tensor = httpclient.InferInput("x", list(batch.shape), "FP32")
    tensor.set_data_from_numpy(batch, binary_data=binary)
    result = client.infer("mlp", [tensor], outputs=[httpclient.InferRequestedOutput("output/score",
                                                                                    binary_data=binary)])
    check(served, result.as_numpy("output/score"), batch)
    assert result.get_response()["model_version"] == "1"


def test_tritonclient_grpc(served, batch):
    client = grpcclient.InferenceServerClient(served.grpc_target)
    assert client.is_server_live() and client.is_server_ready() and client.is_model_ready("mlp")
    assert not client.is_model_ready("no_such_model")
    meta = client.get_model_metadata("mlp", as_json=True)
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": ["-1", "16"]}]
    tensor = grpcclient.InferInput("x", list(batch.shape), "FP32")
    tensor.set_data_from_numpy(batch)
    result = client.infer("mlp", [tensor])
    check(served, result.as_numpy("output/score"), batch)
    assert client.get_server_metadata().name == "graphdef"


@pytest.mark.tf_oracle
def test_tensorflow_serving_grpc_predict_and_metadata(served, batch):
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

    with grpc.insecure_channel(served.grpc_target) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        request = predict_pb2.PredictRequest()
        request.model_spec.name = "mlp"
        request.model_spec.signature_name = "serving_default"
        request.inputs["x"].CopyFrom(tf.make_tensor_proto(batch))
        response = stub.Predict(request, timeout=30)
        answer = tf.make_ndarray(response.outputs["output/score"])
        check(served, answer, batch)
        assert response.model_spec.version.value == 1

        # TensorFlow itself on the same file: the numbers agree within float32 rounding
        graph_def = tf.compat.v1.GraphDef.FromString(MLP.read_bytes())
        with tf.Graph().as_default() as graph:
            tf.compat.v1.import_graph_def(graph_def, name="")
            with tf.compat.v1.Session(graph=graph) as session:
                reference = session.run("output/score:0", {"x:0": batch})
        np.testing.assert_allclose(answer, reference, rtol=1e-5, atol=1e-6)

        meta_request = get_model_metadata_pb2.GetModelMetadataRequest()
        meta_request.model_spec.name = "mlp"
        meta_request.metadata_field.append("signature_def")
        meta = stub.GetModelMetadata(meta_request, timeout=30)
        signatures = get_model_metadata_pb2.SignatureDefMap()
        assert meta.metadata["signature_def"].Unpack(signatures)
        signature = signatures.signature_def["serving_default"]
        assert signature.method_name == "tensorflow/serving/predict"
        assert signature.inputs["x"].dtype == tf.float32.as_datatype_enum
        assert [d.size for d in signature.inputs["x"].tensor_shape.dim] == [-1, 16]
        assert signature.outputs["output/score"].name == "output/score:0"

        # a wrong input is INVALID_ARGUMENT naming it
        request.inputs["x"].CopyFrom(tf.make_tensor_proto(batch.astype(np.float64)))
        with pytest.raises(grpc.RpcError) as error:
            stub.Predict(request, timeout=30)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "input 'x'" in error.value.details() and "float32" in error.value.details()


def test_rest_calls_as_curl_makes_them(served, batch):
    status, _, body = helpers.http(served, "POST", "/v2/models/mlp/infer", {"inputs": [
        {"name": "x", "datatype": "FP32", "shape": list(batch.shape), "data": batch.ravel().tolist()}]})
    assert status == 200, body
    output = json.loads(body)["outputs"][0]
    assert output["name"] == "output/score" and output["shape"] == [5, 1]
    check(served, np.array(output["data"], np.float32).reshape(5, 1), batch)

    status, _, body = helpers.http(served, "POST", "/v1/models/mlp:predict", {"instances": batch.tolist()})
    assert status == 200, body
    check(served, np.array(json.loads(body)["predictions"], np.float32), batch)

    status, _, body = helpers.http(served, "POST", "/v1/models/mlp/versions/1:predict",
                                   {"signature_name": "serving_default", "inputs": {"x": batch.tolist()}})
    assert status == 200, body
    check(served, np.array(json.loads(body)["outputs"], np.float32), batch)

    status, _, body = helpers.http(served, "GET", "/v1/models/mlp")
    assert status == 200 and json.loads(body)["model_version_status"][0]["state"] == "AVAILABLE"
    status, _, body = helpers.http(served, "GET", "/v1/models/mlp/metadata")
    signature = json.loads(body)["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["inputs"]["x"]["dtype"] == "DT_FLOAT"


@pytest.mark.parametrize("runtime", helpers.RUNTIMES)
def test_a_second_model_with_an_image_input(tmp_path, runtime):
    """The CNN: rank-4 input, through tritonclient's binary tensors over gRPC and HTTP."""
    helpers.ensure_library()
    image = np.random.default_rng(3).random((2, 8, 8, 1), dtype=np.float32)
    server = helpers.start(CNN, tmp_path, "--model-name", "digits", "--runtime", runtime)
    try:
        tensor = grpcclient.InferInput("x", [2, 8, 8, 1], "FP32")
        tensor.set_data_from_numpy(image)
        got = grpcclient.InferenceServerClient(server.grpc_target).infer("digits", [tensor]).as_numpy("softmax/probs")
        helpers.assert_served_answer(server, got, CNN, {"x": image}, "softmax/probs:0")
        tensor = httpclient.InferInput("x", [2, 8, 8, 1], "FP32")
        tensor.set_data_from_numpy(image)
        got = httpclient.InferenceServerClient(f"127.0.0.1:{server.http}").infer("digits", [tensor])
        helpers.assert_served_answer(server, got.as_numpy("softmax/probs"), CNN, {"x": image}, "softmax/probs:0")
    finally:
        assert server.stop() == 0


@pytest.mark.tf_oracle
@pytest.mark.parametrize("runtime", helpers.RUNTIMES)
def test_a_real_model_through_tensorflow_serving_grpc(tmp_path, runtime):
    """MobileNetV2 (Keras-made, fixed batch of 2, so served without batching): the Session's answer (its
    bits from the Python runtime), and TensorFlow's recorded answer within the case's tolerance."""
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    case = helpers.ROOT / "tests" / "real_models" / "mobilenet_v2"
    image = np.load(case / "feed_image.npy")
    tolerance = json.loads((case / "case.json").read_text())["tolerances"][0]
    helpers.ensure_library()
    server = helpers.start(case / "model.pb", tmp_path, "--model-name", "mobilenet", "--max-batch-size", "8",
                           "--runtime", runtime)
    try:
        with grpc.insecure_channel(server.grpc_target) as channel:
            request = predict_pb2.PredictRequest()
            request.model_spec.name = "mobilenet"
            request.inputs["image"].CopyFrom(tf.make_tensor_proto(image))
            response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=120)
        answer = tf.make_ndarray(response.outputs["Identity"])
    finally:
        assert server.stop() == 0
    helpers.assert_served_answer(server, answer, case / "model.pb", {"image": image}, "Identity:0")
    np.testing.assert_allclose(answer, np.load(case / "expected_Identity_0.npy"),
                               rtol=tolerance["rtol"], atol=tolerance["atol"])
