"""Conformance cases for issue 34's lookup tables and tf.Example parsing: HashTableV2 and
MutableHashTableV2 with their initializer, find, import, insert, size and export ops, and
ParseExampleV2, ParseExample and ParseSingleExample on records held as Consts.

Tables are filled by the graph's `init_all_tables`, which both Python runtimes run by themselves
before the first run. Expected values are literals worked by hand; tests/python/tables_examples
checks the same ops against TensorFlow. The vocabulary-file initializer is in the graph but not
run here: a case cannot carry its file (tests/python/tables_examples runs it, with SavedModel assets).
graphrun-cc has no kernels for these ops yet: it skips them with that reason.
"""

import numpy as np

import graphdef as tf
from graphdef._proto import example_pb2
from graphdef.ops import lookup_api, parse_example_api as parsing
from graphdef.ops.registry import build

from .base import case, f32, feed, i64

NO_CC = {"graphrun-cc": "no C++ kernel yet (issue 34, Python side first); tests/python/tables_examples asserts "
                        "its 'no kernel for <Op> (<node>)' line"}


@case("lookup_tables", "A read-only table (string -> int64, default -1, a key with a NUL byte) filled by "
      "InitializeTableV2 and one by LookupTableImportV2 (int64 -> float32); a mutable table imported then "
      "inserted into (a key replaced); sizes and a one-entry export.", skip=NO_CC)
def _():
    n = feed("n", i64(3, 9, -1))
    words = lookup_api.StaticHashTable(lookup_api.KeyValueTensorInitializer(["a", "b\x00", ""], i64(1, 2, 3)), -1,
                                       name="words")
    imported = tf.raw_op("HashTableV2", key_dtype=tf.int64, value_dtype=tf.float32, name="scales")
    init = build("LookupTableImportV2", [imported, i64(3, -1), f32(0.5, -2.0)], name="scales_import")
    mutable = tf.raw_op("MutableHashTableV2", key_dtype=tf.int64, value_dtype=tf.int64, name="counts")
    vocab = tf.raw_op("HashTableV2", key_dtype=tf.string, value_dtype=tf.int64, name="vocab")
    build("InitializeTableFromTextFileV2", [vocab, "vocab.txt"], name="vocab_init",
          attrs={"key_index": -2, "value_index": -1})
    with tf.control_dependencies([build("LookupTableImportV2", [mutable, i64(1, 2), i64(10, 20)], name="put")]):
        inserted = build("LookupTableInsertV2", [mutable, i64(2, 7), i64(21, 70)], name="insert")
    with tf.control_dependencies([inserted]):
        tf.identity(tf.raw_op("LookupTableFindV2", mutable, i64(1, 2, 7, 8), np.int64(0)), name="counts_found")
    one = lookup_api.StaticHashTable(lookup_api.KeyValueTensorInitializer(i64(5), i64(50)), 0, name="one")
    tf.get_default_graph()._table_initializers.append(init)  # as TF2's KeyValueTensorInitializer's import
    lookup_api.tables_initializer()
    keys, values = one.export()
    tf.identity(keys, name="one_keys")
    tf.identity(values, name="one_values")
    tf.identity(words.lookup(tf.constant(["b\x00", "c", "", "a"])), name="ids")
    tf.identity(tf.raw_op("LookupTableFindV2", imported, n, np.float32(7.0)), name="scaled")
    tf.identity(words.size(), name="size")
    return {"n": i64(3, 9, -1)}, {
        "ids:0": i64(2, -1, 3, 1), "scaled:0": f32(0.5, 7.0, -2.0), "size:0": np.int64(3),
        "counts_found:0": i64(10, 21, 70, 0), "one_keys:0": i64(5), "one_values:0": i64(50)}


def _example(**features):
    made = example_pb2.Example()
    for key, values in features.items():
        feature = made.features.feature[key]
        kind = "bytes_list" if isinstance(values[0], bytes) else "float_list" if isinstance(values[0], float) \
            else "int64_list"
        getattr(feature, kind).value.extend(values)
    return made.SerializeToString(deterministic=True)


RECORDS = [_example(age=[31], score=[0.25, -1.5], tags=[b"a", b"b"], seq=[1.0, 2.0]),
           _example(score=[3.0, 4.0], seq=[5.0, 6.0, 7.0, 8.0], tags=[b"c"]),
           _example(age=[-2**63], score=[0.0, 2.0])]


@case("parse_example", "ParseExampleV2 of 3 records: an int64 scalar with default -1 (one record lacks it), a "
      "required float pair, a string VarLenFeature (its indices and dense shape) and a FixedLenSequenceFeature "
      "padded with 0.5; TF1's ParseExample and ParseSingleExample of the first record.", skip=NO_CC)
def _():
    serialized = tf.constant(RECORDS, name="records")
    parsed = parsing.parse_example(serialized, {
        "age": parsing.FixedLenFeature([], tf.int64, default_value=-1),
        "score": parsing.FixedLenFeature([2], tf.float32),
        "tags": parsing.VarLenFeature(tf.string),
        "seq": parsing.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=0.5)})
    tf.identity(parsed["age"], name="age")
    tf.identity(parsed["score"], name="score")
    tf.identity(parsed["seq"], name="seq")
    tf.identity(parsed["tags"].indices, name="tags_indices")
    tf.identity(parsed["tags"].dense_shape, name="tags_shape")
    v1 = tf.raw_op("ParseExample", serialized, tf.constant([], tf.string), [tf.constant("tags")],
                   [tf.constant("age")], [np.int64(7)], sparse_types=[tf.string], dense_shapes=[[]], name="v1")
    single = tf.raw_op("ParseSingleExample", serialized[0], [np.float32(9.0)], num_sparse=1, sparse_keys=["tags"],
                       dense_keys=["missing"], sparse_types=[tf.string], dense_shapes=[[]], name="single")
    tf.identity(v1[3], name="v1_age")
    tf.identity(v1[0], name="v1_tags_indices")
    tf.identity(single[0], name="single_tags_indices")
    tf.identity(single[3], name="single_missing")
    return {}, {
        "age:0": i64(31, -1, -2**63), "score:0": f32([0.25, -1.5], [3, 4], [0, 2]),
        "seq:0": f32([[1, 2], [0.5, 0.5]], [[5, 6], [7, 8]], [[0.5, 0.5], [0.5, 0.5]]),
        "tags_indices:0": i64([0, 0], [0, 1], [1, 0]), "tags_shape:0": i64(3, 2),
        "v1_age:0": i64(31, 7, -2**63), "v1_tags_indices:0": i64([0, 0], [0, 1], [1, 0]),
        "single_tags_indices:0": i64([0], [1]), "single_missing:0": np.float32(9.0)}
