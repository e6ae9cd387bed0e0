"""tf.train: the graph-file helper TF1 kept here; optimizers arrive with the learning issue."""

from graphdef.serialize import write_graph  # noqa: F401
