"""Helpers the test folders share: graph builders, runners, oracles and the numerics policy."""
