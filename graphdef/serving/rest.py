"""The HTTP endpoints: the Open Inference Protocol (/v2, with the binary tensor extension) and
TensorFlow Serving's REST API (/v1), plus /metrics. aiohttp on the server's one asyncio loop."""

import asyncio
import json
import time

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from google.protobuf import json_format

from graphdef.framework.errors import InvalidArgumentError, OpError
from graphdef.serving import inference
from graphdef.serving.batching import Draining, Overloaded
from graphdef.serving.tensors import (BadRequest, NotFound, TooLarge, TooSlow, array_from_bytes, array_from_json_like,
                                      array_from_values, json_value, oip_datatype, oip_datatype_dtype,
                                      raw_bytes, parse_shape, shown)

HEADER_LENGTH = "Inference-Header-Content-Length"


def error_answer(e):
    """(HTTP status, error kind) for an exception from a handler; None for an unexpected one."""
    if isinstance(e, TooLarge):
        return 413, "too_large"
    if isinstance(e, TooSlow):
        return 408, "timeout"
    if isinstance(e, BadRequest):
        return 400, "invalid_argument"
    if isinstance(e, InvalidArgumentError):
        return 400, "invalid_argument"
    if isinstance(e, NotFound):
        return 404, "not_found"
    if isinstance(e, Overloaded):
        return 429, "overloaded"
    if isinstance(e, Draining):
        return 503, "unavailable"
    if isinstance(e, OpError):
        return 500, "internal"
    return None


def parameters(obj, where):
    """An object's "parameters" (the Open Inference Protocol's extension field): {} when absent."""
    value = obj.get("parameters")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"{where}: 'parameters' must be an object, got {type(value).__name__}")
    return value


def _json(obj, status=200):
    return web.Response(status=status, body=json.dumps(obj, separators=(",", ":")).encode(),
                        content_type="application/json")


def build_app(repository, metrics, state, max_body, body_timeout=30.0):
    """The aiohttp Application; `state.ready` is False while draining. A body must arrive whole within
    `body_timeout` seconds of its headers (the headers' own deadline is the server's keep-alive timeout)."""

    @web.middleware
    async def account(request, handler):
        start = time.perf_counter()
        protocol = "tfs-rest" if request.path.startswith("/v1/") else "oip-rest"
        model = request.match_info.get("name", "")
        kind = None
        try:
            response = await handler(request)
        except web.HTTPException as e:
            response, kind = _json({"error": e.reason}, e.status), "http"
        except Exception as e:  # noqa: BLE001 - one error line per request, never a traceback to the client
            answer = error_answer(e)
            if answer is None:
                answer = (500, "internal")
                message = f"internal error: {type(e).__name__}: {' '.join(str(e).split())}"
            else:
                message = " ".join(str(e).split())
            response, kind = _json({"error": message}, answer[0]), answer[1]
            if answer[0] in (408, 413):
                # the rest of the body is unread (or never coming): the connection cannot carry another request
                response.force_close()
        if request.path != "/metrics":
            metrics.request(protocol, model, response.status, kind, time.perf_counter() - start,
                            method=request.method, path=request.path, peer=request.remote,
                            bytes_in=request.content_length or 0, bytes_out=response.content_length or 0)
        return response

    too_large = f"request body over the limit of {max_body} bytes (--max-body-mb)"

    async def read_body(request):
        # refused on the header alone: a body that cannot be taken is not read at all
        if request.content_length is not None and request.content_length > max_body:
            raise TooLarge(f"{too_large}: Content-Length is {request.content_length}")
        try:
            return await asyncio.wait_for(request.read(), body_timeout)
        except web.HTTPRequestEntityTooLarge:
            raise TooLarge(too_large) from None
        except (RequestPayloadError, ConnectionError) as e:
            # the client closed or garbled its body half-way: its fault, never a 500
            raise BadRequest(f"the request body was cut short or malformed ({' '.join(str(e).split())})") from None
        except asyncio.TimeoutError:
            raise TooSlow(f"the request body did not arrive within {body_timeout:g} s (--client-timeout); "
                          "send it whole, with a Content-Length that matches it") from None

    async def read_json(request, data=None):
        data = await read_body(request) if data is None else data
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, ValueError) as e:
            raise BadRequest(f"malformed JSON body: {e}") from None
        except RecursionError:
            raise BadRequest("malformed JSON body: nested too deeply") from None
        if not isinstance(obj, dict):
            raise BadRequest("the JSON body must be an object")
        return obj

    # -- Open Inference Protocol ---------------------------------------------------------

    async def live(request):
        return _json({"live": True})

    async def ready(request):
        return _json({"ready": state.ready}, 200 if state.ready else 503)

    async def server_metadata(request):
        return _json({"name": inference.SERVER_NAME, "version": inference.SERVER_VERSION,
                      "extensions": inference.OIP_EXTENSIONS})

    async def model_metadata(request):
        name = request.match_info["name"]
        served = repository.get(name, request.match_info.get("version"))
        return _json(inference.oip_model_metadata(served, repository.models[name].versions))

    async def model_ready(request):
        repository.get(request.match_info["name"], request.match_info.get("version"))
        return _json({"name": request.match_info["name"], "ready": True})

    async def oip_infer(request):
        body = await read_body(request)
        header_length = request.headers.get(HEADER_LENGTH)
        if header_length is not None:
            if not header_length.isdigit() or int(header_length) > len(body):
                raise BadRequest(f"{HEADER_LENGTH} is {shown(repr(header_length))}, the body has {len(body)} bytes")
            split = int(header_length)
            obj, binary = await read_json(request, body[:split]), memoryview(body)[split:]
        else:
            obj, binary = await read_json(request, body), memoryview(b"")
        feeds, offset = {}, 0
        inputs = obj.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise BadRequest("'inputs' must be a non-empty list of tensors")
        for i, tensor in enumerate(inputs):
            if not isinstance(tensor, dict) or not isinstance(tensor.get("name"), str):
                raise BadRequest(f"inputs[{i}] must be an object with a 'name'")
            where = f"input '{shown(tensor['name'])}'"
            dtype = oip_datatype_dtype(tensor.get("datatype"), where)
            shape = parse_shape(tensor.get("shape"), where)
            size = parameters(tensor, where).get("binary_data_size")
            if size is not None:
                if not isinstance(size, int) or size < 0 or offset + size > len(binary):
                    raise BadRequest(f"{where}: binary_data_size {shown(repr(size))} does not fit the "
                                     f"{len(binary) - offset} binary bytes left in the body")
                value = array_from_bytes(binary[offset:offset + size], dtype, shape, where)
                offset += size
            elif "data" in tensor:
                value = array_from_values(tensor["data"], dtype, shape, where)
            else:
                raise BadRequest(f"{where}: neither 'data' nor parameters.binary_data_size given")
            if tensor["name"] in feeds:
                raise BadRequest(f"{where} given twice")
            feeds[tensor["name"]] = value
        if offset != len(binary):
            raise BadRequest(f"{len(binary) - offset} bytes of binary data after the last input")
        requested = obj.get("outputs") or []
        if not isinstance(requested, list) or not all(isinstance(o, dict) and isinstance(o.get("name"), str)
                                                       for o in requested):
            raise BadRequest("'outputs' must be a list of objects with a 'name'")
        binary_default = bool(parameters(obj, "the request").get("binary_data_output", False))
        binary_of = {o["name"]: bool(parameters(o, f"output '{shown(o['name'])}'").get("binary_data", binary_default))
                     for o in requested}
        served, fetches, values = await inference.infer(
            repository, request.match_info["name"], request.match_info.get("version"), feeds,
            [o["name"] for o in requested])
        outputs, blobs = [], []
        for name in fetches:
            value = values[name]
            entry = {"name": name, "datatype": oip_datatype(value.dtype), "shape": list(value.shape)}
            if binary_of.get(name, binary_default):
                blob = raw_bytes(value)
                entry["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                entry["data"] = json_value(value.reshape(-1))
            outputs.append(entry)
        answer = {"model_name": served.name, "model_version": str(served.version), "outputs": outputs}
        if isinstance(obj.get("id"), str):
            answer["id"] = obj["id"]
        header = json.dumps(answer, separators=(",", ":")).encode()
        if not blobs:
            return web.Response(body=header, content_type="application/json")
        return web.Response(body=b"".join([header] + blobs), content_type="application/octet-stream",
                            headers={HEADER_LENGTH: str(len(header))})

    # -- TensorFlow Serving --------------------------------------------------------------

    async def tfs_status(request):
        name = request.match_info["name"]
        repository.get(name, request.match_info.get("version"))
        versions = repository.models[name].versions
        wanted = request.match_info.get("version")
        return _json({"model_version_status": [
            {"version": str(v), "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
            for v in sorted(versions, reverse=True) if wanted in (None, str(v))]})

    async def tfs_metadata(request):
        served = repository.get(request.match_info["name"], request.match_info.get("version"))
        signatures = json_format.MessageToDict(inference.signature_def_map(served), preserving_proto_field_name=True)
        return _json({"model_spec": {"name": served.name, "signature_name": "", "version": str(served.version)},
                      "metadata": {"signature_def": signatures}})

    async def tfs_predict(request):
        obj = await read_json(request)
        inference.check_signature(obj.get("signature_name", ""))
        served = repository.get(request.match_info["name"], request.match_info.get("version"))
        runtime = served.runtime
        if ("instances" in obj) == ("inputs" in obj):
            raise BadRequest("give exactly one of 'instances' (rows) and 'inputs' (columns)")
        rows = "instances" in obj
        if rows:
            instances = obj["instances"]
            if not isinstance(instances, list) or not instances:
                raise BadRequest("'instances' must be a non-empty list of rows")
            if all(isinstance(r, dict) for r in instances):
                names = list(instances[0])
                if any(list(r) != names and set(r) != set(names) for r in instances):
                    raise BadRequest("every instance must name the same inputs")
                columns = {n: [r[n] for r in instances] for n in names}
            elif len(runtime.inputs) == 1:
                columns = {runtime.inputs[0].name: instances}
            else:
                raise BadRequest("the model has several inputs: give each instance as an object {input: value}")
        else:
            given = obj["inputs"]
            if isinstance(given, dict):
                columns = given  # names checked below
            elif len(runtime.inputs) == 1:
                columns = {runtime.inputs[0].name: given}
            else:
                raise BadRequest("the model has several inputs: give 'inputs' as an object {input: value}")
        feeds = {}
        for name, value in columns.items():
            spec = runtime.input(name)
            if spec is None:
                known = ", ".join(s.name for s in runtime.inputs)
                raise BadRequest(f"unknown input '{shown(name)}'; the model's inputs are: {known}")
            feeds[name] = array_from_json_like(value, spec, f"input '{shown(name)}'")
        output_filter = obj.get("output_filter") or []
        if not isinstance(output_filter, list) or not all(isinstance(o, str) for o in output_filter):
            raise BadRequest("'output_filter' must be a list of output names")
        served, fetches, values = await inference.infer(
            repository, served.name, served.version, feeds, output_filter)
        if rows:
            count = len(obj["instances"])
            if any(values[n].ndim == 0 or values[n].shape[0] != count for n in fetches):
                raise BadRequest("the outputs do not have one row per instance; use the columnar 'inputs' format")
            if len(fetches) == 1:
                return _json({"predictions": json_value(values[fetches[0]])})
            listed = {n: json_value(values[n]) for n in fetches}
            return _json({"predictions": [{n: listed[n][i] for n in fetches} for i in range(count)]})
        if len(fetches) == 1:
            return _json({"outputs": json_value(values[fetches[0]])})
        return _json({"outputs": {n: json_value(values[n]) for n in fetches}})

    async def prometheus(request):
        return web.Response(body=metrics.exposition(), headers={"Content-Type": metrics.content_type})

    app = web.Application(middlewares=[account], client_max_size=max_body)
    version = "/versions/{version:[0-9]+}"
    model = "/{name:[^/:]+}"
    app.router.add_get("/v2/health/live", live)
    app.router.add_get("/v2/health/ready", ready)
    app.router.add_get("/v2", server_metadata)
    for prefix in ("/v2/models" + model, "/v2/models" + model + version):
        app.router.add_get(prefix, model_metadata)
        app.router.add_get(prefix + "/ready", model_ready)
        app.router.add_post(prefix + "/infer", oip_infer)
    for prefix in ("/v1/models" + model, "/v1/models" + model + version):
        app.router.add_get(prefix, tfs_status)
        app.router.add_get(prefix + "/metadata", tfs_metadata)
        app.router.add_post(prefix + ":predict", tfs_predict)
    app.router.add_get("/metrics", prometheus)
    return app
