"""Importing this package registers every op family."""

from graphdef.ops import array, math, state  # noqa: F401
from graphdef.ops.registry import REGISTRY  # noqa: F401
