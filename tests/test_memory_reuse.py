"""The first Session keeps freed memory in the process (client/memory_reuse.py): afterwards a
block of 24 MiB comes from malloc's heap, where glibc's default maps fresh pages for it (and
unmaps them when freed, so the next run page-faults them in again). GRAPHDEF_KEEP_MEMORY=0 leaves
glibc's defaults. (24 MiB: under the 32 MiB set here, and above any block that importing the
libraries frees, after which glibc would raise its own threshold past it.)"""

import os
import platform
import subprocess
import sys

import pytest

from tests.cc_helpers import REPO

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")

# Where a fresh 24 MiB array lies: inside the [heap] mapping, or in a mapping of its own
_PROBE = """
import numpy as np
import graphdef as tf
from graphdef.client import memory_reuse
tf.Session()
tuned = memory_reuse.keep_freed_memory()  # what the Session's call did: it tunes only once
block = np.empty(24 << 20, np.uint8)
start = block.ctypes.data
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[heap]"):
        low, high = (int(v, 16) for v in line.split()[0].split("-"))
        print(tuned, low <= start < high)
        break
else:
    print(tuned, False)
"""


def _probe(**env):
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_a_session_keeps_large_blocks_on_the_heap():
    assert _probe() == ["True", "True"]


def test_graphdef_keep_memory_0_leaves_glibcs_defaults():
    assert _probe(GRAPHDEF_KEEP_MEMORY="0") == ["False", "False"]
