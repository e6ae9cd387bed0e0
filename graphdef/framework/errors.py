"""Error types, named as tf.errors names them, so TF1 code that catches them keeps working."""


class OpError(Exception):
    """An error from building or running a graph; the message names the node."""


class InvalidArgumentError(OpError, ValueError):
    pass


class NotFoundError(OpError, KeyError):
    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class FailedPreconditionError(OpError):
    pass


class UnimplementedError(OpError):
    pass


class ResourceExhaustedError(OpError, MemoryError):
    pass
