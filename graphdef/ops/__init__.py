"""Importing this package registers every op family."""

from graphdef.ops import array, compare, math, nn, state  # noqa: F401
from graphdef.ops.registry import REGISTRY  # noqa: F401
