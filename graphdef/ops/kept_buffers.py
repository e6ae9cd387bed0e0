"""What the Session's donation rule (client/session_steps._sole_owner) still reads from here.

No kernel keeps an output buffer between runs any more (the numpy kernels allocate each output),
so no array has a reference held here: kept_references() is 0. REFCOUNTS_TRUSTED: the rule trusts
sys.getrefcount only where its count is known; CPython 3.14's borrowed loads of locals can leave
getrefcount's argument uncounted, so from 3.14 on nothing is donated until the counts are checked.
"""

import sys

REFCOUNTS_TRUSTED = sys.version_info < (3, 14)


def kept_references(owner):  # noqa: ARG001 - the Session's rule still adds it
    """How many references to the array `owner` a kernel keeps: none."""
    return 0
