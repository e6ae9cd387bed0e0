"""Ops the Python runtimes run whose graphrun-cc kernel is not written yet.

Issue 34's op families land in Python first. graphrun-cc refuses a graph that needs one of
them as it refuses any op it has no kernel for ("no kernel for StringJoin (node)"), and the
tests hold its kernel list to the registry less these ops, exactly: a kernel that lands must
leave this list, and an op added without a kernel must join it.
"""

from graphdef.ops.registry import REGISTRY

# every op these modules define, and every string op (graphdef.ops.strings*)
PENDING_MODULES = frozenset({
    "graphdef.ops.sparse",
    "graphdef.ops.tensor_array",
    "graphdef.ops.tensor_list_concat", "graphdef.ops.loop_stacks",
    "graphdef.ops.lookup", "graphdef.ops.parse_example",
    "graphdef.ops.image_codecs",
})
STRING_MODULES = "graphdef.ops.strings"
# the string ops whose graphrun-cc kernel has landed (runner/kernels/strings*.cc)
CC_STRING_KERNELS = frozenset({"StringLength", "StringToNumber", "Substr"})
# and these: defined beside ops graphrun-cc has, or the rest of a module it has some of
PENDING_OPS = frozenset({
    "CombinedNonMaxSuppression", "DynamicStitch", "ParallelDynamicStitch",
    "MatrixDiag", "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3", "MatrixDiagV2", "MatrixDiagV3",
    "MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3",
    "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN", "SparseSegmentSumWithNumSegments",
    "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments", "SparseSegmentSumGrad",
    "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad",
})


def cc_pending():
    """The registered ops graphrun-cc has no kernel for yet."""
    return {op for op, opdef in REGISTRY.items()
            if opdef.module in PENDING_MODULES or op in PENDING_OPS
            or (opdef.module.startswith(STRING_MODULES) and op not in CC_STRING_KERNELS)}
