"""How a Session runs the GraphDef library's functions for If, While and the call ops.

Each function body is a Graph of its own (graphdef/wire/functions.py); it runs in an inner
Session that shares the outer one's variables, so its plans are made once and reused across
calls and loop iterations. Calls nest through kernels, so the depth is bounded: a function
that calls itself forever gets one error line instead of a Python stack overflow.
"""

import threading

from graphdef.framework.errors import InvalidArgumentError, OpError
from graphdef.ops.functional import func_name
from graphdef.wire.call_budget import MAX_CALL_DEPTH
from graphdef.wire.functions import FunctionError, call_attrs


class FunctionRuntime:
    """`call(name, args, node)` for the kernels of one Session's graph and its functions' graphs."""

    def __init__(self, library, session_class, variables):
        self._library = library
        self._session_class = session_class
        self._variables = variables
        self._sessions = {}
        self._depth = threading.local()

    def call(self, func, args, node):
        """The results of function `func` (a func attr: a name, or a NameAttrList with the attr values it
        passes) on `args` (a list), for the node named `node` that calls it."""
        name = func_name(func)
        where = f"node '{node}' calls function '{name}'"
        if self._library is None:
            raise InvalidArgumentError(f"{where}, but the graph has no function library")
        depth = getattr(self._depth, "value", 0)
        try:
            body = self._library.body(name, call_attrs(func))
        except FunctionError as e:  # a body is instantiated on its first call, as in TensorFlow
            raise InvalidArgumentError(f"{where}: {e}" if depth == 0 else str(e)) from None
        if len(args) != len(body.args):
            raise InvalidArgumentError(f"{where}, which takes {len(body.args)} arguments, with {len(args)}")
        if depth >= MAX_CALL_DEPTH:
            raise InvalidArgumentError(f"{where}: function calls nest more than {MAX_CALL_DEPTH} deep; "
                                       "does a function call itself without end?")
        session = self._sessions.get(id(body))  # one body per function and attr values
        if session is None:
            session = self._session_class(graph=body.graph)
            session._variables = self._variables
            session._functions = self
            self._sessions[id(body)] = session
        self._depth.value = depth + 1
        try:
            results = session.run(body.fetches, dict(zip(body.args, args)))
        except OpError as e:
            if depth > 0:  # the outermost call names the whole chain once
                raise
            raise type(e)(f"{where}: {e}") from None
        finally:
            self._depth.value = depth
        return results[:len(body.outputs)]
