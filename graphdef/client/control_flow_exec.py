"""Session.run for graphs with TF1 control flow: dead tensors, loop frames and iterations.

The plain plan (session.py) runs a fixed list of steps; a graph with Switch, Merge and loops
cannot be ordered once, so this executor runs it as TensorFlow's does, by data arrival. Each
node input arrives in a context, a (frame, iteration) pair: the root frame holds everything
outside loops; Enter moves a value into iteration 0 of a child frame (one per loop and per
iteration of the enclosing loop), NextIteration into the next iteration, Exit back to the
enclosing frame. A node runs when all its inputs reached one context; if one of them is dead
it does not run and its outputs are dead, except Merge, which runs on its first live input
(on iteration 0 a loop Merge waits only for its Enter inputs, later only for its back edges).
Constants, variables and fed tensors are read where they are used, in any frame, as a
constant Enter's value is seen by every iteration.

This path is chosen only when the fetches reach a control-flow op, so plain graphs keep the
fast plan.
"""

import collections
import os

import numpy as np

from graphdef.framework import dtypes, limits
from graphdef.framework.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from graphdef.framework.limits import TensorTooLarge
from graphdef.ops.control_flow import CONTROL_FLOW_OPS, DEAD

_OTHER, _SWITCH, _MERGE, _ENTER, _EXIT, _NEXT, _TRIGGER = range(7)
_KIND = {"Switch": _SWITCH, "RefSwitch": _SWITCH, "Merge": _MERGE, "RefMerge": _MERGE,
         "Enter": _ENTER, "RefEnter": _ENTER, "Exit": _EXIT, "RefExit": _EXIT,
         "NextIteration": _NEXT, "RefNextIteration": _NEXT, "ControlTrigger": _TRIGGER}
_INT32 = dtypes.int32.np.type
# a Merge's pending state once it has fired in an iteration: as in TensorFlow it fires once, so a
# second live input (a malformed graph) cannot deliver a consumer's slot twice
_FIRED = object()


# a file's loop whose condition never turns false must end in an error, not hang the runtime
MAX_ITERATIONS_ENV = "GRAPHDEF_MAX_WHILE_ITERATIONS"
DEFAULT_MAX_ITERATIONS = 1_000_000


def max_iterations():
    text = os.environ.get(MAX_ITERATIONS_ENV)
    try:
        value = int(text) if text else DEFAULT_MAX_ITERATIONS
    except ValueError:
        raise InvalidArgumentError(f"{MAX_ITERATIONS_ENV}={text!r} is not a whole number") from None
    if value < 1:
        raise InvalidArgumentError(f"{MAX_ITERATIONS_ENV}={text!r} must be at least 1")
    return value


def reaches_control_flow(targets, fed):
    """Whether the ops the fetches need include a control-flow op (so this executor is needed)."""
    return any(op.type in CONTROL_FLOW_OPS for op in _needed_ops(targets, fed))


def _needed_ops(targets, fed):
    roots = [t.op if hasattr(t, "value_index") else t for t in targets
             if not (hasattr(t, "value_index") and t in fed)]
    seen, stack = set(), list(roots)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs if t not in fed)
        stack.extend(op.control_inputs)
    return seen


class _Node:
    __slots__ = ("op", "kind", "kernel", "n_slots", "n_control", "reads", "args", "outs", "control_outs",
                 "back_slots", "front_slots", "frame_name", "is_constant", "frame_path", "out_root")

    def __init__(self, op, kind):
        self.op, self.kind = op, kind
        self.kernel = None
        self.reads = []          # (slot, reader): a Const, variable or fed value, read when the node runs
        self.outs = [[] for _ in op.outputs]  # per output: [(consumer node, slot)]
        self.control_outs = []
        self.back_slots = self.front_slots = 0
        self.frame_name = op.attrs.get("frame_name", "") if kind == _ENTER else ""
        self.is_constant = bool(op.attrs.get("is_constant", False)) if kind == _ENTER else False
        self.frame_path = None


class _Frame:
    __slots__ = ("parent", "parent_iter", "depth", "iterations", "invariants", "children", "live_exits",
                 "dead_exits")

    def __init__(self, parent, parent_iter):
        self.parent, self.parent_iter = parent, parent_iter
        self.depth = 0 if parent is None else parent.depth + 1
        self.iterations = {}     # iteration -> {node: pending state}
        self.invariants = []     # (constant Enter node, value): delivered to every iteration
        self.children = {}       # (iteration, frame name) -> _Frame
        self.live_exits, self.dead_exits = set(), set()


class ControlFlowPlan:
    """One (fetches, feed keys) of a graph with control flow, ready to run many times."""

    def __init__(self, session, targets, feeds, rebuild, single, bind_kernel, convert_feed, result):
        self.rebuild, self.single, self.feeds = rebuild, single, feeds
        self.convert_feed, self.result = convert_feed, result
        self.variables = session._variables.python  # brought up to date before each run (variables.py)
        self.max_iterations = max_iterations()
        fed = {t: i for i, t in enumerate(feeds)}
        ops = _needed_ops(targets, fed)
        unfed = sorted(op.name for op in ops if op.type == "Placeholder")
        if unfed:
            raise InvalidArgumentError(f"Session.run: placeholder {', '.join(repr(n) for n in unfed)} was not fed; "
                                       f"feed_dict has {sorted(t.name for t in feeds)}")
        for t in targets:
            if hasattr(t, "value_index") and t.dtype is dtypes.variant:
                raise TypeError(f"Session.run: cannot fetch '{t.name}': it is a variant (a TensorList), which "
                                "only passes between ops; fetch a tensor made from it (TensorListStack)")
        self.nodes = {}
        for op in sorted(ops, key=lambda o: o.name):
            if not self._is_read(op):
                self.nodes[op] = _Node(op, _KIND.get(op.type, _OTHER))
        for node in self.nodes.values():
            self._wire(node, fed, session, bind_kernel)
        _assign_frames(self.nodes)
        self.sources = [n for n in self.nodes.values() if n.n_slots == len(n.reads) and n.n_control == 0]
        self.fetch_nodes = []
        for t in targets:
            op = t.op if hasattr(t, "value_index") else t
            if hasattr(t, "value_index") and t in fed:
                self.fetch_nodes.append(("fed", fed[t]))
            elif op in self.nodes:
                if not self.nodes[op].out_root:
                    frame = (self.nodes[op].frame_path or ("?",))[-1]
                    raise InvalidArgumentError(f"Session.run: cannot fetch '{getattr(t, 'name', op.name)}': it is "
                                               f"inside the loop frame '{frame}'; fetch "
                                               "a value the loop returns (an Exit) instead")
                self.fetch_nodes.append(("node", self.nodes[op], getattr(t, "value_index", None)))
            else:
                self.fetch_nodes.append(("read", op, getattr(t, "value_index", None)))
        # only fetched outputs are kept past their consumers
        self.fetch_set = {entry[1] for entry in self.fetch_nodes if entry[0] == "node"}

    @staticmethod
    def _is_read(op):
        return (op.type in ("Const", "VariableV2") and not op.control_inputs) or op.type == "Placeholder"

    def _wire(self, node, fed, session, bind_kernel):
        op = node.op
        refs = set(op.opdef.ref_inputs)
        node.args = [i for i in range(len(op.inputs)) if i not in refs]
        node.n_slots = len(op.inputs)
        for slot, t in enumerate(op.inputs):
            if t in fed:
                node.reads.append((slot, ("feed", fed[t])))
            elif t.op not in self.nodes:
                node.reads.append((slot, ("op", t)))
            else:
                producer = self.nodes[t.op]
                producer.outs[t.value_index].append((node, slot))
                if node.kind == _MERGE and producer.kind == _NEXT:
                    node.back_slots += 1
        node.front_slots = node.n_slots - len(node.reads) - node.back_slots
        node.n_control = 0
        for c in op.control_inputs:
            if c in self.nodes:
                self.nodes[c].control_outs.append(node)
                node.n_control += 1
        if node.kind == _OTHER:
            node.kernel = bind_kernel(op, session)

    # -- running ------------------------------------------------------------------------------
    def run(self, feed_dict):
        try:
            return self._run(feed_dict)
        except (IndexError, AttributeError, KeyError) as e:
            # A file's loops and conds that do not fit together (a Switch short of inputs, an Exit
            # with no loop around it) surface as lookups that fail; say so in one line.
            raise InvalidArgumentError(f"Session.run: the graph's control flow is malformed (its frames or "
                                       f"inputs do not fit together: {type(e).__name__}: {e})") from None

    def _run(self, feed_dict):
        feeds = [self.convert_feed(v, t) for t, v in zip(self.feeds, feed_dict.values())] if self.feeds else []
        self.fed_values = feeds
        self.fetched = {}
        self.queue = collections.deque()
        self.frames = []
        root = self._new_frame(None, 0)
        root.iterations[0] = {}
        for node in self.sources:
            self.queue.append((root, 0, node, [None] * node.n_slots, False))
        try:
            self._drain()
        finally:
            del self.queue, self.frames
        values = []
        for entry in self.fetch_nodes:
            if entry[0] == "fed":
                values.append(self.result(feeds[entry[1]]))
            elif entry[0] == "read":
                values.append(None if entry[2] is None else self.result(self._read_op(entry[1].outputs[entry[2]])))
            else:
                node, index = entry[1], entry[2]
                if node not in self.fetched:
                    raise InvalidArgumentError(f"Session.run: '{node.op.name}' never ran: its inputs never all "
                                               "arrived (a loop that did not finish, or inputs from frames that "
                                               "never meet)")
                outputs = self.fetched[node]
                if index is None:
                    values.append(None)
                    continue
                value = outputs[index]
                if value is DEAD:
                    raise InvalidArgumentError(f"Session.run: the fetched tensor '{node.op.outputs[index].name}' "
                                               "is dead: it lies on the untaken side of a Switch (a cond branch "
                                               "not taken), so it has no value in this run")
                values.append(self.result(value))
        self.fetched = self.fed_values = None
        if self.single:
            return values[0]
        return self.rebuild(values)

    def _new_frame(self, parent, parent_iter):
        frame = _Frame(parent, parent_iter)
        self.frames.append(frame)
        return frame

    def _drain(self):
        while True:
            queue = self.queue
            while queue:
                self._fire(*queue.popleft())
            if not self._flush_dead_exits():
                return

    def _flush_dead_exits(self):
        """A loop whose Exits never received a live value (it sat in an untaken branch) passes dead
        values out, once nothing else can run; the deepest such frame first."""
        pending = [f for f in self.frames if f.dead_exits - f.live_exits]
        if not pending:
            return False
        frame = max(pending, key=lambda f: f.depth)
        nodes, frame.dead_exits = frame.dead_exits - frame.live_exits, set()
        for node in sorted(nodes, key=lambda n: n.op.name):
            frame.live_exits.add(node)
            self._propagate(frame.parent, frame.parent_iter, node, [DEAD] * len(node.outs), True)
        return True

    def _read_op(self, tensor):
        op = tensor.op
        if op.type == "Const":
            return op.attrs["value"]
        return self.variables_value(op)

    def variables_value(self, op):
        value = self.variables.get(op.name)
        if value is None:
            raise InvalidArgumentError(f"node '{op.name}' (VariableV2): the variable is read before it was "
                                       "initialized; run its initializer (tf.global_variables_initializer()) first")
        return value

    def _fire(self, frame, it, node, inputs, dead_control):
        for slot, (kind, what) in node.reads:
            inputs[slot] = self.fed_values[what] if kind == "feed" else self._read_op(what)
        kind = node.kind
        # a dead input, or a dead control input, makes a node dead; Merge and ControlTrigger excepted
        dead = kind != _MERGE and kind != _TRIGGER and (dead_control or any(v is DEAD for v in inputs))
        if dead:
            outputs = [DEAD] * len(node.outs)
        elif kind == _OTHER:
            outputs = self._compute(node, inputs)
        elif kind == _SWITCH:
            pred = np.asarray(inputs[1])
            if pred.shape != ():
                raise InvalidArgumentError(f"node '{node.op.name}' (Switch): pred must be a scalar, got shape "
                                           f"{list(pred.shape)}")
            outputs = [DEAD, inputs[0]] if bool(pred) else [inputs[0], DEAD]
        elif kind == _MERGE:
            for i, v in enumerate(inputs):
                if v is not None and v is not DEAD:
                    outputs = [v, _INT32(i)]
                    break
            else:
                outputs = [DEAD, DEAD]
                dead = True
        elif kind == _TRIGGER:
            outputs = []
        elif not inputs:
            raise InvalidArgumentError(f"node '{node.op.name}' ({node.op.type}) has no input to pass on")
        else:  # Enter, Exit, NextIteration pass their input on
            outputs = [inputs[0]]
        if node in self.fetch_set and node.out_root and (not dead or node not in self.fetched):
            self.fetched[node] = outputs
        if kind == _ENTER:
            self._enter(frame, it, node, outputs, dead)
        elif kind == _EXIT:
            if dead:
                frame.dead_exits.add(node)
            else:
                frame.live_exits.add(node)
                self._propagate(frame.parent, frame.parent_iter, node, outputs, False)
        elif kind == _NEXT:
            if not dead:  # a dead value ends the loop here instead of starting an iteration
                if it + 1 >= self.max_iterations:
                    raise InvalidArgumentError(
                        f"the loop frame '{node.frame_path[-1]}' ran {self.max_iterations} iterations and its "
                        f"condition is still true; set {MAX_ITERATIONS_ENV} to allow more")
                self._propagate(frame, it + 1, node, outputs, False)
        else:
            self._propagate(frame, it, node, outputs, dead)

    def _compute(self, node, inputs):
        try:
            result = node.kernel(*[inputs[i] for i in node.args])
        except OpError:
            raise
        except TensorTooLarge as exc:
            raise ResourceExhaustedError(f"node '{node.op.name}' ({node.op.type}): {exc}") from None
        except MemoryError:
            text = limits.out_of_memory_text()
            raise ResourceExhaustedError(f"node '{node.op.name}' ({node.op.type}): {text}") from None
        except Exception as exc:
            raise InvalidArgumentError(f"node '{node.op.name}' ({node.op.type}): {exc}") from exc
        n = len(node.outs)
        return [result] if n == 1 else list(result) if n else []

    def _enter(self, frame, it, node, outputs, dead):
        key = (it, node.frame_name)
        child = frame.children.get(key)
        if child is None:
            child = frame.children[key] = self._new_frame(frame, it)
        if not node.is_constant:
            self._propagate(child, 0, node, outputs, dead)
            return
        child.invariants.append((node, outputs, dead))
        if not child.iterations:
            self._iteration(child, 0)
        else:
            for i in list(child.iterations):
                self._propagate(child, i, node, outputs, dead)

    def _iteration(self, frame, it):
        """The pending states of iteration `it`, starting it (with the loop's constants) if new."""
        states = frame.iterations.get(it)
        if states is None:
            states = frame.iterations[it] = {}
            for node, outputs, dead in frame.invariants:
                self._propagate(frame, it, node, outputs, dead)
        return states

    def _propagate(self, frame, it, node, outputs, dead):
        states = self._iteration(frame, it)
        for index, edges in enumerate(node.outs):
            value = outputs[index] if index < len(outputs) else DEAD
            for consumer, slot in edges:
                self._deliver(frame, it, states, consumer, slot, value)
        for consumer in node.control_outs:
            self._deliver(frame, it, states, consumer, -1, DEAD if dead else True)

    def _deliver(self, frame, it, states, node, slot, value):
        state = states.get(node)
        if state is _FIRED:
            return
        if state is None:  # [inputs, data arrived, controls arrived, a live data input, a dead control]
            state = states[node] = [[None] * node.n_slots, 0, 0, False, False]
        if slot < 0:
            state[2] += 1
            if value is DEAD:
                state[4] = True
        else:
            state[0][slot] = value
            state[1] += 1
            if value is not DEAD:
                state[3] = True
        if state[2] < node.n_control:
            return
        if node.kind == _MERGE:
            expected = node.back_slots if (it > 0 and node.back_slots) else node.front_slots
            if not state[3] and state[1] < expected:
                return
            states[node] = _FIRED
        elif state[1] < node.n_slots - len(node.reads):
            return
        else:
            del states[node]
        self.queue.append((frame, it, node, state[0], state[4]))


def _assign_frames(nodes):
    """Each node's loop frame path, checked: every input of a node must come from its own frame
    (through Enter from the enclosing one), or TensorFlow would refuse the graph too."""
    producers = {}
    for node in nodes.values():
        for edges in node.outs:
            for consumer, _ in edges:
                producers.setdefault(consumer, []).append(node)
        for consumer in node.control_outs:
            producers.setdefault(consumer, []).append(node)
    pending = collections.deque(n for n in nodes.values() if not producers.get(n))
    for n in pending:
        n.frame_path = (n.frame_name,) if n.kind == _ENTER else ()
    waiting = {n: len([p for p in producers.get(n, ()) if not (n.kind == _MERGE and p.kind == _NEXT)])
               for n in nodes.values()}
    while pending:
        node = pending.popleft()
        path = node.frame_path
        out_path = path[:-1] if node.kind == _EXIT else path
        consumers = [c for edges in node.outs for c, _ in edges] + node.control_outs
        for consumer in consumers:
            if consumer.kind == _MERGE and node.kind == _NEXT:
                continue
            want = out_path + (consumer.frame_name,) if consumer.kind == _ENTER else out_path
            if consumer.frame_path is None:
                consumer.frame_path = want
            elif consumer.frame_path != want:
                raise InvalidArgumentError(
                    f"node '{consumer.op.name}' ({consumer.op.type}) takes inputs from different loop frames "
                    f"({_frame_text(consumer.frame_path)} and {_frame_text(want)}, from '{node.op.name}'); "
                    "a value enters a loop only through an Enter node")
            waiting[consumer] -= 1
            if waiting[consumer] == 0:
                pending.append(consumer)
    for n in nodes.values():
        if n.frame_path is not None:
            n.out_root = len(n.frame_path) == (1 if n.kind == _EXIT else 0)
    stuck = [n for n in nodes.values() if n.frame_path is None or waiting[n] > 0]
    if stuck:
        n = min(stuck, key=lambda x: x.op.name)
        raise InvalidArgumentError(f"node '{n.op.name}' ({n.op.type}) is on a cycle that is not a loop's "
                                   "NextIteration -> Merge back edge")


def _frame_text(path):
    return "the root frame" if not path else f"frame '{path[-1]}'"

