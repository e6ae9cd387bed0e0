"""graphrun serve: a model over the Open Inference Protocol (REST and gRPC) and TensorFlow Serving's API.

    runtime     the model behind a small interface (load, metadata, run) the server calls
    tensors     request tensors in and response tensors out, checked against the model's inputs
    inference   what both transports share: checking a request, queueing it, model metadata
    batching    dynamic batching and the bounded queue in front of the runtime
    repository  one model file, or a folder of NAME/VERSION/model.pb, polled for new versions
    metrics     Prometheus metrics and the structured access log
    rest        the HTTP endpoints (OIP v2 and TensorFlow Serving's /v1)
    grpc_server the gRPC services (inference.GRPCInferenceService, tensorflow.serving.PredictionService)
    server      both servers on one asyncio loop, and the graceful drain on SIGTERM
"""
