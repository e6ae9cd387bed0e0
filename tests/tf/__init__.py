"""TensorFlow as the oracle: its own models, TF1 programs and listings, run alike here."""
