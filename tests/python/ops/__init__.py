"""The op families' numpy kernels and declarations, against TensorFlow and numpy oracles."""
