"""The tensor size limit's default is the memory the process may really have, and an allocation
that fails under the limit is one clean line, in graphrun and graphrun-cc alike.

The default is the least of physical memory, the cgroup's limit (v2 memory.max, v1
memory.limit_in_bytes, on the process's cgroup and its ancestors) and RLIMIT_AS / RLIMIT_DATA.
The cgroup files are read under GRAPHDEF_CGROUP_ROOT when it is set, so the tests build fake
/proc/self/cgroup, /proc/self/mountinfo and cgroup trees in a tmp dir and point both runtimes at
them. The address-space cases run each runtime as a subprocess with a lowered RLIMIT_AS.
"""

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from graphdef.framework import limits
from tests.support.cc_helpers import Graph

GiB = 1 << 30
V1_UNLIMITED = "9223372036854771712"  # what cgroup v1 writes for "no limit" with 4 KiB pages
CGROUP = "/system.slice/job.scope"
V2_MOUNT = "41 23 0:38 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
V1_MOUNT = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
OTHER_MOUNTS = ("22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n")


def fake_root(tmp_path, cgroup_lines, mountinfo, files):
    """A directory standing for /: proc/self/cgroup, proc/self/mountinfo and `files` ({path: text})."""
    root = tmp_path / "root"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/cgroup").write_text(cgroup_lines)
    (root / "proc/self/mountinfo").write_text(mountinfo)
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n")
    return root


def v2_root(tmp_path, own, parent="max"):
    return fake_root(tmp_path, f"0::{CGROUP}\n", OTHER_MOUNTS + V2_MOUNT, {
        "/sys/fs/cgroup/system.slice/memory.max": parent,
        f"/sys/fs/cgroup{CGROUP}/memory.max": own,
    })


def v1_root(tmp_path, own, parent=V1_UNLIMITED):
    return fake_root(tmp_path, f"5:cpu:/\n4:memory:{CGROUP}\n0::/\n", OTHER_MOUNTS + V1_MOUNT, {
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": V1_UNLIMITED,
        "/sys/fs/cgroup/memory/system.slice/memory.limit_in_bytes": parent,
        f"/sys/fs/cgroup/memory{CGROUP}/memory.limit_in_bytes": own,
    })


# -- the cgroup limit, from fake files ---------------------------------------------------------

@pytest.mark.parametrize("own, parent, expected", [
    (str(3 * GiB), "max", 3 * GiB),       # the process's own cgroup
    ("max", str(2 * GiB), 2 * GiB),       # an ancestor's limit binds its descendants
    (str(3 * GiB), str(2 * GiB), 2 * GiB),
    ("max", "max", None),                 # "max" is no limit
])
def test_cgroup_v2_memory_max(tmp_path, own, parent, expected):
    assert limits.cgroup_memory_limit(str(v2_root(tmp_path, own, parent))) == expected


@pytest.mark.parametrize("own, parent, expected", [
    (str(512 << 20), V1_UNLIMITED, 512 << 20),
    (V1_UNLIMITED, str(GiB), GiB),
    (V1_UNLIMITED, V1_UNLIMITED, None),   # v1's "unlimited" is a huge number, not a limit
    ("9223372036854710272", V1_UNLIMITED, None),  # the same with 64 KiB pages
])
def test_cgroup_v1_limit_in_bytes(tmp_path, own, parent, expected):
    assert limits.cgroup_memory_limit(str(v1_root(tmp_path, own, parent))) == expected


def test_a_mount_showing_only_the_process_subtree(tmp_path):
    """A container's view: /proc/self/cgroup names the host's path, the mount's root is that path."""
    mount = f"41 23 0:38 {CGROUP} /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n"
    root = fake_root(tmp_path, f"0::{CGROUP}\n", mount, {"/sys/fs/cgroup/memory.max": str(GiB)})
    assert limits.cgroup_memory_limit(str(root)) == GiB


def test_hybrid_hierarchies_take_the_smaller(tmp_path):
    root = fake_root(tmp_path, f"4:memory:{CGROUP}\n0::{CGROUP}\n", V1_MOUNT + V2_MOUNT.replace(
        "/sys/fs/cgroup ", "/sys/fs/cgroup/unified "), {
        f"/sys/fs/cgroup/memory{CGROUP}/memory.limit_in_bytes": str(5 * GiB),
        f"/sys/fs/cgroup/unified{CGROUP}/memory.max": str(4 * GiB),
    })
    assert limits.cgroup_memory_limit(str(root)) == 4 * GiB


@pytest.mark.parametrize("text", ["", "lots", "-5", "１２３", "0x10"])
def test_unreadable_files_and_values_are_no_limit(tmp_path, text):
    assert limits.cgroup_memory_limit(str(tmp_path / "nothing")) is None
    assert limits.cgroup_memory_limit(str(v2_root(tmp_path, text))) is None


def test_the_default_is_the_least_of_all(tmp_path):
    root = str(v2_root(tmp_path, str(3 * GiB)))
    rlimit = limits.rlimit_memory()
    expected = min(n for n in (limits.physical_memory(), 3 * GiB, rlimit) if n is not None)
    assert limits.default_max_tensor_bytes(root) == expected
    assert limits.default_max_tensor_bytes(str(tmp_path / "nothing")) == min(
        n for n in (limits.physical_memory(), rlimit) if n is not None)


def test_the_variable_overrides_the_cgroup(tmp_path, monkeypatch):
    monkeypatch.setenv(limits.ROOT_ENV, str(v2_root(tmp_path, str(GiB))))
    monkeypatch.delenv(limits.ENV, raising=False)
    assert limits.max_tensor_bytes() == min(GiB, limits.default_max_tensor_bytes("/"))
    monkeypatch.setenv(limits.ENV, str(5 * GiB))
    assert limits.max_tensor_bytes() == 5 * GiB


# -- both runtimes, as processes ---------------------------------------------------------------

def fill_model(tmp_path, dims=(32768, 32768)):
    """A Fill asking for a float32 tensor of `dims` (4 GiB by default)."""
    g = Graph()
    g.const("dims", np.asarray(dims, np.int32))
    g.const("v", np.float32(1.0))
    g.op("big", "Fill", ["dims", "v"], np.float32)
    return g.save(tmp_path / "fill.pb")


def address_space(limit):
    def lower():
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    return lower


def run_both(runner, args, env=None, address_limit=None, engine=None):
    """{"graphrun": (code, stdout, stderr), "graphrun-cc": ...}, each a fresh process."""
    full_env = {k: v for k, v in os.environ.items() if k not in (limits.ENV, limits.ROOT_ENV)}
    full_env.update(env or {})
    if engine:
        full_env["GRAPHDEF_ENGINE"] = engine
    commands = {"graphrun": [sys.executable, "-m", "graphdef.graphrun.cli"], "graphrun-cc": [str(runner)]}
    results = {}
    for name, command in commands.items():
        proc = subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=120,
                              env=full_env, preexec_fn=address_space(address_limit) if address_limit else None)
        assert proc.returncode >= 0, f"{name} died with signal {-proc.returncode}: {proc.stderr[-2000:]}"
        results[name] = (proc.returncode, proc.stdout, proc.stderr)
    return results


def no_free_memory_check(tmp_path):
    """GRAPHDEF_CGROUP_ROOT at an empty directory: no meminfo, cgroup or status file says how much
    memory is free, so an allocation is tried (test_free_memory.py covers the check itself)."""
    root = tmp_path / "nothing"
    root.mkdir(exist_ok=True)
    return {limits.ROOT_ENV: str(root)}


def one_clean_line(results, code, text):
    """Each runtime exited `code` with nothing on stdout and the one line `<name>: text`."""
    for name, (got, stdout, stderr) in results.items():
        assert (got, stdout, stderr) == (code, "", f"{name}: {text}\n"), name


def test_a_lowered_address_space_lowers_the_limit(runner, tmp_path):
    results = run_both(runner, [fill_model(tmp_path)], address_limit=2 * GiB)
    one_clean_line(results, 4, "node 'big' (Fill): output [32768,32768] float32 would take 4.0 GiB, over the "
                               "limit of 2.0 GiB (set GRAPHDEF_MAX_TENSOR_BYTES to change it)")


def test_the_cgroup_limit_is_read_alike_by_both(runner, tmp_path):
    root = v1_root(tmp_path, str(3 * GiB + 512 * (1 << 20)), parent=str(3 * GiB))
    results = run_both(runner, [fill_model(tmp_path)], env={limits.ROOT_ENV: str(root)})
    one_clean_line(results, 4, "node 'big' (Fill): output [32768,32768] float32 would take 4.0 GiB, over the "
                               "limit of 3.0 GiB (set GRAPHDEF_MAX_TENSOR_BYTES to change it)")


def test_under_the_limit_a_small_tensor_still_runs(runner, tmp_path):
    results = run_both(runner, [fill_model(tmp_path, (2, 3))], address_limit=2 * GiB)
    for name, (code, stdout, stderr) in results.items():
        assert (code, stderr) == (0, ""), name
        assert stdout == "big:0 float32 [2,3] = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]\n", name


OUT_OF_MEMORY = ("node 'big' (Fill): out of memory, under the limit of 6.0 GiB per tensor (free memory, or set "
                 "GRAPHDEF_MAX_TENSOR_BYTES lower)")


@pytest.mark.parametrize("engine", ["python", "cc"])
def test_an_allocation_failing_under_the_limit_is_one_line(runner, tmp_path, engine):
    """The limit says 6 GiB, the address space 2 GiB: the 4 GiB tensor passes the check and its
    allocation fails; MemoryError in numpy, bad_alloc in C++, the same line from both."""
    results = run_both(runner, [fill_model(tmp_path)], env={limits.ENV: str(6 * GiB), **no_free_memory_check(tmp_path)},
                       address_limit=2 * GiB, engine=engine)
    one_clean_line(results, 4, OUT_OF_MEMORY)


def test_a_random_feed_failing_under_the_limit_is_one_line(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, "unknown")
    g.op("y", "Neg", ["x"], np.float32)
    results = run_both(runner, [g.save(tmp_path / "feed.pb"), "--random", "--shape", "x=32768,32768"],
                       env={limits.ENV: str(6 * GiB), **no_free_memory_check(tmp_path)}, address_limit=2 * GiB)
    one_clean_line(results, 2, "--random: placeholder x (float32, <unknown>): out of memory, under the limit of "
                               "6.0 GiB per tensor (free memory, or set GRAPHDEF_MAX_TENSOR_BYTES lower)")


def test_a_const_failing_to_decode_under_the_limit_is_one_line(runner, tmp_path):
    """A 4 GiB Const given by two values (the last repeats) is under a 6 GiB limit, over the
    2 GiB address space: decoding it fails at load, exit 3 in both."""
    g = Graph()
    g.const("c", np.asarray([1.0, 2.0], np.float32))
    proto = g.proto.node[0].attr["value"].tensor
    proto.tensor_shape.dim[0].size = 1 << 30
    proto.ClearField("tensor_content")
    proto.float_val.extend([1.0, 2.0])
    path = g.save(tmp_path / "const.pb")
    results = run_both(runner, [path], env={limits.ENV: str(6 * GiB), **no_free_memory_check(tmp_path)},
                       address_limit=2 * GiB)
    one_clean_line(results, 3, f"{path}: out of memory while loading the model")
