"""A Session's variables when its plans run on more than one engine.

Each engine keeps its own copy of a variable (the numpy engine in a dict, the C++ core inside
its session), and a plan reads and writes only its engine's. So the Session tracks which
engines hold each variable's latest value: before a plan runs, every variable it touches is
copied to its engine from one that holds the latest value, if its own copy is stale; after
it, the variables it may write are fresh on its engine alone. A session whose plans all run
on one engine never copies anything.

Variables is also the mapping {VariableV2 node name: value} that checkpoints, SavedModel
loading, freezing and Variable.load read and write (`session._variables`): a read brings the
latest value into the numpy engine's dict, a write goes there and makes it the latest.
"""

from collections.abc import MutableMapping

from graphdef.ops.array import frozen

PYTHON = "python"


class Variables(MutableMapping):
    """{variable name: latest value} over the engines of one Session."""

    def __init__(self, runtimes):
        self.python = {}          # the numpy engine's values: its kernels read and write this dict
        self._fresh = {}          # name -> names of the engines whose copy is the latest value
        self.runtimes = runtimes  # engine name -> the session's runtime (read_variable, assign_variable)

    def _holders(self, name):
        held = self._fresh.get(name)
        if held is None and name in self.python:  # written by a numpy kernel outside a tracked plan
            held = self._fresh[name] = {PYTHON}
        return held

    def bring(self, runtime, names):
        """Before a plan on `runtime` that touches `names`: its copy of each becomes the latest."""
        for name in names:
            held = self._holders(name)
            if held and runtime.name not in held:
                value = self.runtimes[next(iter(held))].read_variable(name)
                if value is not None:
                    runtime.assign_variable(name, value)
                held.add(runtime.name)

    def written(self, runtime, names):
        """After a plan on `runtime` that may have written `names` (even one that failed midway)."""
        for name in names:
            self._fresh[name] = {runtime.name}

    # -- the mapping: the latest values, brought into the numpy engine's dict ----------------

    def __getitem__(self, name):
        held = self._holders(name)
        if not held:
            raise KeyError(name)
        if PYTHON not in held:
            self.bring(self.runtimes[PYTHON], [name])
            if name not in self.python:
                raise KeyError(name)
        return self.python[name]

    def __setitem__(self, name, value):
        self.python[name] = frozen(value)
        self._fresh[name] = {PYTHON}

    def __delitem__(self, name):
        if not self._fresh.pop(name, None) and name not in self.python:
            raise KeyError(name)
        self.python.pop(name, None)

    def __contains__(self, name):
        return bool(self._holders(name))

    def __iter__(self):
        return iter([name for name in {**self._fresh, **self.python} if self._holders(name)])

    def __len__(self):
        return sum(1 for _ in self)

    def clear(self):
        self.python.clear()
        self._fresh.clear()
