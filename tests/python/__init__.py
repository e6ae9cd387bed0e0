"""The Python package: graphs, Sessions, engines, gradients, training, control flow, functions, layers."""
