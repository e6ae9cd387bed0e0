"""tf.lookup: hash tables filled by initializers, and vocabulary tables with out-of-vocabulary buckets."""

from graphdef.ops.lookup_api import (KeyValueTensorInitializer, StaticHashTable,  # noqa: F401
                                     StaticVocabularyTable, TextFileIndex, TextFileInitializer)
