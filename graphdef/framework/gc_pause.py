"""Pausing Python's cyclic garbage collector while a large graph is built or walked.

Loading a GraphDef allocates several objects per node and frees almost none, so each
generation-2 collection rescans everything built so far: the load grows faster than the
node count. Nothing made here is garbage until the load ends, so the pause loses nothing;
the collector resumes, as it was, on the way out.
"""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
