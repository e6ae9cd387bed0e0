"""The gRPC services on grpc.aio: inference.GRPCInferenceService (Open Inference Protocol) and
tensorflow.serving.PredictionService (Predict, GetModelMetadata).

The handlers are registered under the services' real names with generic handlers, over messages
compiled from proto/serving/ in packages of our own (see proto/serving/oip.proto for why).

Every method is registered as client-streaming although each takes one message: grpc.aio calls a
unary handler only once its message is whole, so a client that opens a call and stops sending half
way would hold the call and its bytes for as long as the connection lives; read here, the message
has a deadline. On the wire a unary call and a one-message stream are the same.
"""

import asyncio
import time

import grpc
from google.protobuf.message import DecodeError

from graphdef._proto import oip_pb2, tfs_pb2
from graphdef.framework.errors import InvalidArgumentError, OpError
from graphdef.serving import inference
from graphdef.serving.batching import Draining, Overloaded
from graphdef.serving.http_protocol import default_max_connections
from graphdef.serving.infer_wire import split_raw_contents
from graphdef.serving.tensors import (BadRequest, NotFound, TooLarge, TooSlow, array_from_bytes, array_from_values,
                                      oip_datatype, oip_datatype_dtype, parse_shape, raw_bytes, shown,
                                      tensor_from_proto, tensor_to_proto)

OIP_SERVICE = "inference.GRPCInferenceService"
TFS_SERVICE = "tensorflow.serving.PredictionService"

# InferTensorContents field per numpy kind/size
_CONTENTS = {"BOOL": "bool_contents", "INT8": "int_contents", "INT16": "int_contents", "INT32": "int_contents",
             "INT64": "int64_contents", "UINT8": "uint_contents", "UINT16": "uint_contents",
             "UINT32": "uint_contents", "UINT64": "uint64_contents", "FP32": "fp32_contents",
             "FP64": "fp64_contents"}


# calls at a time on one connection: HTTP/2's advised minimum, so that one connection's stalled calls
# cannot grow without bound
MAX_STREAMS_PER_CONNECTION = 100


def channel_options(message_limit, client_timeout, max_connections=None):
    """The gRPC server's settings. The server pings a quiet connection, and a peer that vanished
    without closing (a half-open connection) is dropped one more client timeout after a ping goes
    unanswered; a connection without calls is closed after 10 client timeouts, one that has not
    finished its HTTP/2 handshake after one. Connections past `max_connections`
    (http_protocol.default_max_connections() when None) are closed at once."""
    timeout_ms = max(1000, int(client_timeout * 1000))
    if max_connections is None:
        max_connections = default_max_connections()
    return [("grpc.max_receive_message_length", message_limit),
            ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", timeout_ms),
            ("grpc.keepalive_timeout_ms", timeout_ms),
            # any ping, also one of grpc's own bandwidth probes, which holds back the keepalive pings
            # while it waits: a peer that answers none is dropped
            ("grpc.http2.ping_timeout_ms", timeout_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.max_connection_idle_ms", 10 * timeout_ms),
            ("grpc.server_handshake_timeout_ms", timeout_ms),
            ("grpc.http2.settings_timeout", timeout_ms),
            ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
            ("grpc.max_allowed_incoming_connections", max_connections)]


def status_of(e):
    if isinstance(e, TooLarge):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, "too_large"
    if isinstance(e, TooSlow):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "timeout"
    if isinstance(e, (BadRequest, InvalidArgumentError)):
        return grpc.StatusCode.INVALID_ARGUMENT, "invalid_argument"
    if isinstance(e, NotFound):
        return grpc.StatusCode.NOT_FOUND, "not_found"
    if isinstance(e, Overloaded):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, "overloaded"
    if isinstance(e, Draining):
        return grpc.StatusCode.UNAVAILABLE, "unavailable"
    if isinstance(e, OpError):
        return grpc.StatusCode.INTERNAL, "internal"
    return None


class _Unparsable:
    """A request message that did not parse: answered INVALID_ARGUMENT by the handler (grpc's own
    answer to a deserializer's exception is INTERNAL with a traceback in the log)."""

    id = ""

    def __init__(self, type_name, error):
        self.message = f"the message does not parse as {type_name}: {' '.join(str(error).split())}"


def _parser(request_type):
    def parse(data):
        try:
            return request_type.FromString(data)
        except DecodeError as e:
            return _Unparsable(request_type.DESCRIPTOR.name, e)
    return parse


class _InferRequest:
    """A ModelInferRequest whose raw_input_contents are views of the received bytes (infer_wire.py)."""

    __slots__ = ("message", "raw")

    def __init__(self, message, raw):
        self.message, self.raw = message, raw

    @property
    def id(self):
        return self.message.id

    @property
    def model_name(self):
        return self.message.model_name


def _parse_infer(data):
    split = split_raw_contents(data)
    if split is not None:
        try:
            return _InferRequest(oip_pb2.ModelInferRequest.FromString(split[0]), split[1])
        except DecodeError:
            pass  # parsed whole below, for protobuf's own words about it
    message = _parser(oip_pb2.ModelInferRequest)(data)
    if isinstance(message, _Unparsable):
        return message
    return _InferRequest(message, list(message.raw_input_contents))


async def _read_request(context, client_timeout):
    """The call's one message, which must arrive whole within `client_timeout` of the call's start."""
    try:
        async with asyncio.timeout(client_timeout):
            request = await context.read()
    except TimeoutError:
        raise TooSlow(f"the request message did not arrive within {client_timeout:g} s (--client-timeout); "
                      "send it whole") from None
    if request is grpc.aio.EOF:
        raise BadRequest("the call ended without a request message")
    return request


def _handler(metrics, protocol, method, model_of, function, client_timeout):
    async def handle(_messages, context):
        start = time.perf_counter()
        code, kind, message = grpc.StatusCode.OK, None, ""
        request = None
        try:
            request = await _read_request(context, client_timeout)
            if isinstance(request, _Unparsable):
                raise BadRequest(request.message)
            return await function(request)
        except Exception as e:  # noqa: BLE001 - one status per request, never a traceback to the client
            answer = status_of(e)
            if answer is None:
                code, kind = grpc.StatusCode.INTERNAL, "internal"
                message = f"internal error: {type(e).__name__}: {' '.join(str(e).split())}"
            else:
                (code, kind), message = answer, " ".join(str(e).split())
        finally:
            # the request id (ModelInfer's) lets a load test match every answer to its request
            extra = {"id": request.id} if getattr(request, "id", "") else {}
            model = "" if request is None or isinstance(request, _Unparsable) else model_of(request)
            metrics.request(protocol, model, code.name, kind, time.perf_counter() - start,
                            method=method, peer=context.peer(), **extra)
        await context.abort(code, message)
    return handle


def _contents_array(tensor, dtype, shape, where):
    datatype = tensor.datatype
    if datatype == "FP16":
        raise BadRequest(f"{where}: FP16 has no typed contents field; send it in raw_input_contents")
    values = list(getattr(tensor.contents, _CONTENTS[datatype]))
    return array_from_values(values, dtype, shape, where)


def services(repository, metrics, state, client_timeout=30.0):
    """The generic handlers of both services; a call's message must arrive within `client_timeout` seconds."""

    async def server_live(request):
        return oip_pb2.ServerLiveResponse(live=True)

    async def server_ready(request):
        return oip_pb2.ServerReadyResponse(ready=state.ready)

    async def model_ready(request):
        try:
            repository.get(request.name, request.version)
        except NotFound:
            return oip_pb2.ModelReadyResponse(ready=False)
        return oip_pb2.ModelReadyResponse(ready=True)

    async def server_metadata(request):
        return oip_pb2.ServerMetadataResponse(name=inference.SERVER_NAME, version=inference.SERVER_VERSION,
                                              extensions=inference.OIP_EXTENSIONS)

    async def model_metadata(request):
        served = repository.get(request.name, request.version)
        meta = inference.oip_model_metadata(served, repository.models[request.name].versions)
        return oip_pb2.ModelMetadataResponse(
            name=meta["name"], versions=meta["versions"], platform=meta["platform"],
            inputs=[oip_pb2.ModelMetadataResponse.TensorMetadata(**t) for t in meta["inputs"]],
            outputs=[oip_pb2.ModelMetadataResponse.TensorMetadata(**t) for t in meta["outputs"]])

    async def model_infer(parsed):
        request, raw = parsed.message, parsed.raw
        if raw and len(raw) != len(request.inputs):
            raise BadRequest(f"raw_input_contents has {len(raw)} entries for {len(request.inputs)} inputs")
        feeds = {}
        for i, tensor in enumerate(request.inputs):
            where = f"input '{shown(tensor.name)}'"
            dtype = oip_datatype_dtype(tensor.datatype, where)
            shape = parse_shape(list(tensor.shape), where)
            value = array_from_bytes(raw[i], dtype, shape, where) if raw else \
                _contents_array(tensor, dtype, shape, where)
            if tensor.name in feeds:
                raise BadRequest(f"{where} given twice")
            feeds[tensor.name] = value
        served, fetches, values = await inference.infer(repository, request.model_name, request.model_version,
                                                        feeds, [o.name for o in request.outputs])
        response = oip_pb2.ModelInferResponse(model_name=served.name, model_version=str(served.version),
                                              id=request.id)
        for name in fetches:
            value = values[name]
            response.outputs.add(name=name, datatype=oip_datatype(value.dtype), shape=list(value.shape))
            response.raw_output_contents.append(raw_bytes(value))
        return response

    async def predict(request):
        spec = request.model_spec
        inference.check_signature(spec.signature_name)
        version = spec.version.value if spec.HasField("version") else None
        feeds = {name: tensor_from_proto(proto, f"input '{shown(name)}'") for name, proto in request.inputs.items()}
        served, fetches, values = await inference.infer(repository, spec.name, version, feeds,
                                                        list(request.output_filter))
        response = tfs_pb2.PredictResponse()
        response.model_spec.name = served.name
        response.model_spec.version.value = served.version
        response.model_spec.signature_name = inference.SIGNATURE
        for name in fetches:
            tensor_to_proto(values[name], response.outputs[name])
        return response

    async def get_model_metadata(request):
        spec = request.model_spec
        unknown = [f for f in request.metadata_field if f != "signature_def"]
        if unknown or not request.metadata_field:
            raise BadRequest(f"metadata_field must be ['signature_def'], got {list(request.metadata_field)}")
        served = repository.get(spec.name, spec.version.value if spec.HasField("version") else None)
        response = tfs_pb2.GetModelMetadataResponse()
        response.model_spec.name = served.name
        response.model_spec.version.value = served.version
        any_value = response.metadata["signature_def"]
        any_value.type_url = inference.SIGNATURE_DEF_MAP_URL
        any_value.value = inference.signature_def_map(served).SerializeToString()
        return response

    def rpc(protocol, name, function, request_type, response_type, model_of):
        parse = _parse_infer if request_type is oip_pb2.ModelInferRequest else _parser(request_type)
        return grpc.stream_unary_rpc_method_handler(
            _handler(metrics, protocol, name, model_of, function, client_timeout),
            request_deserializer=parse, response_serializer=response_type.SerializeToString)

    no_model = lambda r: ""  # noqa: E731
    by_name = lambda r: r.name  # noqa: E731
    oip = {
        "ServerLive": rpc("oip-grpc", "ServerLive", server_live, oip_pb2.ServerLiveRequest,
                          oip_pb2.ServerLiveResponse, no_model),
        "ServerReady": rpc("oip-grpc", "ServerReady", server_ready, oip_pb2.ServerReadyRequest,
                           oip_pb2.ServerReadyResponse, no_model),
        "ModelReady": rpc("oip-grpc", "ModelReady", model_ready, oip_pb2.ModelReadyRequest,
                          oip_pb2.ModelReadyResponse, by_name),
        "ServerMetadata": rpc("oip-grpc", "ServerMetadata", server_metadata, oip_pb2.ServerMetadataRequest,
                              oip_pb2.ServerMetadataResponse, no_model),
        "ModelMetadata": rpc("oip-grpc", "ModelMetadata", model_metadata, oip_pb2.ModelMetadataRequest,
                             oip_pb2.ModelMetadataResponse, by_name),
        "ModelInfer": rpc("oip-grpc", "ModelInfer", model_infer, oip_pb2.ModelInferRequest,
                          oip_pb2.ModelInferResponse, lambda r: r.model_name),
    }
    tfs = {
        "Predict": rpc("tfs-grpc", "Predict", predict, tfs_pb2.PredictRequest, tfs_pb2.PredictResponse,
                       lambda r: r.model_spec.name),
        "GetModelMetadata": rpc("tfs-grpc", "GetModelMetadata", get_model_metadata,
                                tfs_pb2.GetModelMetadataRequest, tfs_pb2.GetModelMetadataResponse,
                                lambda r: r.model_spec.name),
    }
    return [grpc.method_handlers_generic_handler(OIP_SERVICE, oip),
            grpc.method_handlers_generic_handler(TFS_SERVICE, tfs)]
