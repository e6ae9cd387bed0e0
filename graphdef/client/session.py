"""Session: runs a graph's fetches with feeds, keeping variable values across runs, as TF1's does.

Each distinct (fetches, feed keys) is planned once, on the session's engine (runtime.py): the
numpy reference runtime ("python"), the C++ core in process ("cc"), or "auto", the default,
which takes cc for every plan it can run. Whatever the engine, Session.run takes and returns
the same things and raises the same error classes (run_args.py).
"""

import threading

from graphdef.client import runtime, table_init
from graphdef.client.run_args import structure_key
from graphdef.client.variables import Variables
from graphdef.framework.graph import Operation, Tensor, get_default_graph


class Session:
    """Runs a graph; keeps variable values across run() calls until closed.

    `engine`: "auto" (cc where it can, else python; the default, or what $GRAPHDEF_ENGINE says),
    "python" or "cc". `optimize` (not TensorFlow's): False runs the graph as written in the cc
    engine; by default it is optimized unless GRAPHDEF_OPTIMIZE=0.
    """

    def __init__(self, target="", graph=None, config=None, engine=None, *, optimize=None):
        self.graph = graph if graph is not None else get_default_graph()
        self.engine = runtime.engine_name(engine)
        self._optimize = optimize
        self._runtimes = {"python": runtime.PythonRuntime(self)}  # "cc" joins on first use
        self._variables = Variables(self._runtimes)
        self._cc_refused = None
        self._plans = {}
        self._lock = threading.Lock()
        self._closed = False

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluates `fetches` (a Tensor, Operation, name, or a list/tuple/dict of them)."""
        if self._closed:
            raise RuntimeError("Session.run: this session is closed")
        table_init.before_run(self, fetches)  # a loaded graph's lookup tables, filled as TF's loaders do
        return self._run_plan(self._plan(fetches, feed_dict), feed_dict)

    def _run_plan(self, plan, feed_dict):
        if not plan.touches:
            return plan.run(feed_dict)
        variables = self._variables
        with self._lock:  # each variable the plan touches is brought to its engine first
            variables.bring(plan.runtime, plan.touches)
        try:
            return plan.run(feed_dict)
        finally:
            if plan.writes:
                with self._lock:
                    variables.written(plan.runtime, plan.writes)

    def _plan(self, fetches, feed_dict):
        feed_keys = tuple(feed_dict) if feed_dict else ()
        key = (fetches if isinstance(fetches, (Tensor, Operation, str)) else structure_key(fetches), feed_keys)
        plan = self._plans.get(key)
        if plan is None:
            plan = runtime.make_plan(self, fetches, feed_keys)
            self._plans[key] = plan
        return plan

    def _function_session(self, graph):
        """The session a function body runs in (client/functions.py): numpy, as its caller's kernel."""
        return Session(graph=graph, engine="python")

    def close(self):
        self._closed = True
        for engine in self._runtimes.values():
            engine.close()
        self._variables.clear()
        self._plans.clear()

    def as_default(self):
        return _DefaultSession(self)

    def __enter__(self):
        self._default = _DefaultSession(self)
        self._default.__enter__()
        return self

    def __exit__(self, *exc):
        self._default.__exit__(*exc)
        self.close()
        return False


class InteractiveSession(Session):
    """A Session that installs itself as the default session when created."""

    def __init__(self, target="", graph=None, config=None, engine=None, *, optimize=None):
        super().__init__(target, graph, config, engine, optimize=optimize)
        _sessions.stack.append(self)

    def close(self):
        if self in _sessions.stack:
            _sessions.stack.remove(self)
        super().close()


class _SessionStack(threading.local):
    def __init__(self):
        self.stack = []


_sessions = _SessionStack()


class _DefaultSession:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _sessions.stack.append(self.session)
        return self.session

    def __exit__(self, *exc):
        if _sessions.stack and _sessions.stack[-1] is self.session:
            _sessions.stack.pop()
        return False


def plan_engine(session, fetches, feed_dict=None):
    """The engine ("python" or "cc") that session.run(fetches, feed_dict) runs on."""
    return session._plan(fetches, feed_dict).runtime.name


def optimization_report(session, fetches, feed_dict=None):
    """What the numpy engine's load-time passes change in the graph session.run(fetches, feed_dict)
    runs (graphdef.optimize.Report), or None when it runs the graph as it is."""
    plan = runtime.python_plan(session, fetches, tuple(feed_dict) if feed_dict else ())
    return getattr(plan, "optimization", None)


def get_default_session():
    return _sessions.stack[-1] if _sessions.stack else None


def default_session_for(graph, session=None):
    session = session or get_default_session()
    if session is None:
        raise ValueError("no default session: pass session=..., or use `with sess.as_default():`")
    if session.graph is not graph:
        raise ValueError("the default session runs another graph than this tensor's")
    return session
