"""graphrun-cc's string tensors, compared with graphrun (the Python runtime) and TensorFlow."""
