"""The test suite; a package so `python -m tests.conformance.generate` and pytest import it the same way."""
