"""graphrun-cc's load-time graph passes: what they rewrite and what they leave alone."""
