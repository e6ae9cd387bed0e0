"""tf.linalg: matrix products, diagonals and bands."""

from graphdef.ops.einsum import einsum  # noqa: F401
from graphdef.ops.matmul import matmul  # noqa: F401
from graphdef.ops.matrix_diag import matrix_band_part as band_part  # noqa: F401
from graphdef.ops.matrix_diag import matrix_diag as diag  # noqa: F401
from graphdef.ops.matrix_diag import matrix_diag_part as diag_part  # noqa: F401
from graphdef.ops.matrix_diag import matrix_set_diag as set_diag  # noqa: F401
