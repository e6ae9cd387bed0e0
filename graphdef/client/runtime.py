"""The engines a Session runs its plans on, behind one small interface.

    python  PythonRuntime: the numpy reference runtime (python_engine.py); every op graphdef has
    cc      CcRuntime: the C++ core in process through graphrun_c.h (cc_engine.py); the fast one
    auto    cc for a plan when the library loads and has a kernel for every op the plan needs,
            else python: decided once per plan (the default; $GRAPHDEF_ENGINE changes it)

A runtime holds one graph and its variables:

    name                              "python" or "cc"
    plan(fetches, feed_keys) -> plan  plan.run(feed_dict) gives what Session.run returns; raises an
                                      OpError (cc: or GraphrunError) when it cannot run them
    read_variable(name) -> array | None, assign_variable(name, array), close()

Every plan also gets `runtime` (the one that runs it) and `touches` and `writes` (the
VariableV2 names it may touch and may write), which the Session uses to keep a variable's value
coherent when plans of one session run on different engines (variables.py).
"""

import os

from graphdef._native import capi
from graphdef.client import python_engine
from graphdef.client.cc_engine import CcRuntime, op_error
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.graph import Tensor
from graphdef.ops.array import frozen
from graphdef.wire.call_check import check_deferred_calls
from graphdef.wire.functions import FunctionError

ENGINES = ("auto", "python", "cc")
ENVIRONMENT = "GRAPHDEF_ENGINE"


def engine_name(engine=None):
    """The engine a Session uses: `engine` when given, else $GRAPHDEF_ENGINE, else auto."""
    name = engine if engine is not None else (os.environ.get(ENVIRONMENT) or "auto")
    if name not in ENGINES:
        where = f"${ENVIRONMENT}" if engine is None else "Session(engine=...)"
        raise ValueError(f"{where}: unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    return name


class PythonRuntime:
    """The numpy engine: its variables are the session's Variables.python dict."""

    name = "python"

    def __init__(self, session):
        self.session = session

    def plan(self, fetches, feed_keys):
        return python_engine.make_plan(self.session, fetches, feed_keys)

    def read_variable(self, name):
        return self.session._variables.python.get(name)

    def assign_variable(self, name, value):
        self.session._variables.python[name] = frozen(value)

    def close(self):
        pass


_library_missing = None  # why libgraphrun.so does not load in this process, once known


def cc_runtime(session):
    """The session's CcRuntime, made on first use; raises LibraryMissing or GraphrunError."""
    global _library_missing
    runtimes = session._runtimes
    if "cc" in runtimes:
        return runtimes["cc"]
    # Two threads' first plans must not each make one: a plan would run in a runtime whose
    # variables the session does not track.
    with session._lock:
        if "cc" not in runtimes:
            if _library_missing is not None:
                raise _library_missing
            if session._cc_refused is not None:  # the graph itself: not tried again for every plan
                raise session._cc_refused
            try:
                runtimes["cc"] = CcRuntime(session.graph, session._optimize)
            except capi.LibraryMissing as e:
                _library_missing = e
                raise
            except capi.GraphrunError as e:
                session._cc_refused = e
                raise
        return runtimes["cc"]


def make_plan(session, fetches, feed_keys):
    """The plan of session.run(fetches, feed_dict with `feed_keys`) on the session's engine."""
    plan = None
    if session.engine == "cc":
        try:
            plan = cc_runtime(session).plan(fetches, feed_keys)
        except capi.GraphrunError as e:  # the graph itself refused when the session was made
            raise op_error(e, "Session(engine='cc')") from None
    elif session.engine == "auto":
        try:
            plan = cc_runtime(session).plan(fetches, feed_keys)
        except Exception as e:  # noqa: BLE001 - what cc cannot run, python does; its errors are the reference
            reason = e
        else:
            reason = None
    if plan is None:
        plan = python_plan(session, fetches, feed_keys)
        if session.engine == "auto":
            plan.fallback = reason  # why cc did not take it
        return plan
    return _tracked(plan, plan.runtime, session, fetches, feed_keys)


def cc_takes(session):
    """True when the session's graph is loaded in the cc engine, which has then checked its function
    calls itself (graphdef.wire.call_check's deferred calls)."""
    if session.engine == "python":
        return False
    try:
        cc_runtime(session)
    except (capi.LibraryMissing, capi.GraphrunError):
        return False
    return True


def python_plan(session, fetches, feed_keys):
    """The numpy engine's plan, whatever the session's engine (profiling, optimization reports)."""
    try:
        check_deferred_calls(session.graph)  # the cc engine took the graph, but not this plan
    except FunctionError as e:
        raise InvalidArgumentError(str(e)) from None
    runtime = session._runtimes["python"]
    return _tracked(runtime.plan(fetches, feed_keys), runtime, session, fetches, feed_keys)


def _tracked(plan, runtime, session, fetches, feed_keys):
    plan.runtime = runtime
    _, _, targets, feeds = python_engine.resolve_for(session, fetches, feed_keys)
    plan.touches, plan.writes = touched_variables(targets, feeds)
    return plan


def touched_variables(targets, feeds):
    """(the VariableV2 names a run of `targets` may read or write, those it may write)."""
    fed = set(feeds)
    stack = [t.op if isinstance(t, Tensor) else t for t in targets if t not in fed]
    seen, touched, written = set(), set(), set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "VariableV2":
            touched.add(op.name)
        for i in getattr(op.opdef, "ref_inputs", ()):
            written.add(op.inputs[i].op.name)
        stack.extend(t.op for t in op.inputs if t is not None and t not in fed)
        stack.extend(op.control_inputs)
    return frozenset(touched | written), frozenset(written)
