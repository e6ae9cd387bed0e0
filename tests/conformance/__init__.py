"""Conformance vectors: the table (cases.py), its generator, and the committed files in cases/."""
