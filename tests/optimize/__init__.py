"""graphdef.optimize: the optimized graph computes what the original does."""
