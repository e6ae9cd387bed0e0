"""The conformance table: small graphs, their feeds, and what every runtime must answer.

Each case builds its graph with graphdef's public API into a fresh default graph and
returns `(feeds, expected)`: placeholder name -> ndarray, and fetched tensor name ->
ndarray. Expected values are literals, or plain numpy worked in float64 and rounded
once, so they come from an oracle independent of the kernels under test. Nothing here
runs a Session.

No case states a tolerance: each fetched tensor gets the one the numerics policy gives
the ops that made it (graphdef/framework/numerics.py, declared with each op), written to case.json
by the generator. Exact ops are compared bit for bit.

Regenerate the committed files after editing: .venv/bin/python -m tests.conformance.generate
"""

# Importing a family registers its cases, in this order.
from . import elementwise, sources, variables, broadcasting, reductions, matmul, shapes, cast  # noqa: F401
from . import shape_queries, training, comparisons, softmax_losses, optimizers, conv_pool  # noqa: F401
from . import activations, rearranging, tf_frozen, control_flow, functions  # noqa: F401
from . import linalg, batch_norm_versions, space_batch, image, nms  # noqa: F401
from . import indexing_scans  # noqa: F401
from . import fused  # noqa: F401
from . import segments_sparse_diag  # noqa: F401
from . import tables_examples  # noqa: F401
from . import tensor_arrays  # noqa: F401
from . import image_codecs  # noqa: F401
from . import strings_cc  # noqa: F401
from .base import CASES

__all__ = ["CASES"]
