"""graphrun-cc's kernels against numpy oracles and their refusals."""
