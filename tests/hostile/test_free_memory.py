"""The tensor limit is per tensor, and a run holds many: a tensor of 64 MiB or more is also checked
against the memory free at that moment, so a run whose tensors together outgrow the machine is
refused at the first one that does not fit, in one line from both runtimes, instead of being ended
by the OOM killer.

Free memory is the least of /proc/meminfo's MemAvailable, the room under each memory cgroup's limit
(limit minus usage) and RLIMIT_AS / RLIMIT_DATA less VmSize / VmData from /proc/self/status, all read
under GRAPHDEF_CGROUP_ROOT when it is set: the tests give both runtimes the same fake files."""

import numpy as np
import pytest

from graphdef.framework import limits
from tests.hostile.test_memory_limits import (CGROUP, GiB, OTHER_MOUNTS, V1_MOUNT, V1_UNLIMITED, V2_MOUNT, fake_root,
                                              one_clean_line, run_both)
from tests.support.cc_helpers import Graph, type_attr

MiB = 1 << 20


def meminfo(available_kib):
    return {"/proc/meminfo": f"MemTotal:       24000000 kB\nMemFree:          100000 kB\n"
                             f"MemAvailable:   {available_kib} kB\nBuffers:           10 kB"}


def summed_fill(tmp_path, dims):
    """Fill `dims` of float32 ones, summed to a scalar (the large tensor is never printed)."""
    g = Graph()
    g.const("dims", np.asarray(dims, np.int32))
    g.const("one", np.float32(1.0))
    g.op("big", "Fill", ["dims", "one"], np.float32)
    g.const("axes", np.arange(len(dims), dtype=np.int32))
    g.op("total", "Sum", ["big", "axes"], np.float32, Tidx=type_attr(np.int32))
    return g.save(tmp_path / "fill.pb")


# -- what free_memory_now reads, from fake files -------------------------------------------------

def test_meminfo_available(tmp_path):
    root = fake_root(tmp_path, "", "", meminfo(102400))
    assert limits.free_memory_now(str(root)) == 100 * MiB


def test_cgroup_v2_room_is_limit_less_usage_at_the_tightest_level(tmp_path):
    root = fake_root(tmp_path, f"0::{CGROUP}\n", OTHER_MOUNTS + V2_MOUNT, {
        "/sys/fs/cgroup/system.slice/memory.max": str(2 * GiB),
        "/sys/fs/cgroup/system.slice/memory.current": str(2 * GiB - 300 * MiB),
        f"/sys/fs/cgroup{CGROUP}/memory.max": "max",
        f"/sys/fs/cgroup{CGROUP}/memory.current": str(GiB),
        **meminfo(8 * 1024 * 1024)})
    assert limits.free_memory_now(str(root)) == 300 * MiB


def test_cgroup_v1_room_and_a_usage_over_the_limit(tmp_path):
    root = fake_root(tmp_path, f"4:memory:{CGROUP}\n", OTHER_MOUNTS + V1_MOUNT, {
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": V1_UNLIMITED,
        "/sys/fs/cgroup/memory/memory.usage_in_bytes": str(5 * GiB),
        f"/sys/fs/cgroup/memory{CGROUP}/memory.limit_in_bytes": str(GiB),
        f"/sys/fs/cgroup/memory{CGROUP}/memory.usage_in_bytes": str(GiB + 1)})
    assert limits.free_memory_now(str(root)) == 0


@pytest.mark.parametrize("text", ["", "MemAvailable:\n", "MemAvailable: lots kB\n", "MemAvailable: -5 kB\n",
                                  "MemAvailableX: 5 kB\n"])
def test_unreadable_meminfo_says_nothing(tmp_path, text):
    root = fake_root(tmp_path, "", "", {"/proc/meminfo": text})
    assert limits.free_memory_now(str(root)) is None


# -- both runtimes, as processes -----------------------------------------------------------------

def test_a_tensor_larger_than_free_memory_is_refused_alike(runner, tmp_path):
    root = fake_root(tmp_path, "", "", meminfo(102400))
    results = run_both(runner, [summed_fill(tmp_path, (32, 1024, 1024))], env={limits.ROOT_ENV: str(root)})
    one_clean_line(results, 4, "node 'big' (Fill): output [32,1024,1024] float32 would take 128.0 MiB, more than "
                               "the 100.0 MiB of memory free now (free memory, or ask for less)")


def test_a_tensor_that_fits_free_memory_runs(runner, tmp_path):
    root = fake_root(tmp_path, "", "", meminfo(102400))
    results = run_both(runner, [summed_fill(tmp_path, (16, 1024, 1024))], env={limits.ROOT_ENV: str(root)})
    for name, (code, stdout, stderr) in results.items():
        assert (code, stderr, stdout) == (0, "", "total:0 float32 [] = 16777216.0\n"), name


def test_the_room_under_a_cgroup_limit_is_read_alike(runner, tmp_path):
    root = fake_root(tmp_path, f"0::{CGROUP}\n", OTHER_MOUNTS + V2_MOUNT, {
        f"/sys/fs/cgroup{CGROUP}/memory.max": str(GiB),
        f"/sys/fs/cgroup{CGROUP}/memory.current": str(GiB - 74 * MiB)})
    results = run_both(runner, [summed_fill(tmp_path, (32, 1024, 1024))], env={limits.ROOT_ENV: str(root)})
    one_clean_line(results, 4, "node 'big' (Fill): output [32,1024,1024] float32 would take 128.0 MiB, more than "
                               "the 74.0 MiB of memory free now (free memory, or ask for less)")


def test_an_address_space_limit_counts_what_the_process_has_mapped(runner, tmp_path):
    """RLIMIT_AS 2 GiB allows a 1.5 GiB tensor by the per-tensor rule, but with 1 GiB mapped (the
    fake status's VmSize) only 1 GiB is left."""
    root = fake_root(tmp_path, "", "", {"/proc/self/status": "Name:\tx\nVmSize:\t 1048576 kB\nVmData:\t 1024 kB"})
    results = run_both(runner, [summed_fill(tmp_path, (384, 1024, 1024))], env={limits.ROOT_ENV: str(root)},
                       address_limit=2 * GiB)
    one_clean_line(results, 4, "node 'big' (Fill): output [384,1024,1024] float32 would take 1.5 GiB, more than "
                               "the 1.0 GiB of memory free now (free memory, or ask for less)")
