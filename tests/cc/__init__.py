"""The C++ runtime: graphrun-cc, libgraphrun.so and its C API, the runner's layers."""
