"""Topological order over any dependency function, without recursion."""


class CycleError(ValueError):
    """The dependencies close a cycle; `cycle` lists its members in data-flow order (each one
    feeds the next, and the last feeds the first)."""

    def __init__(self, cycle):
        self.cycle = cycle
        super().__init__(f"the graph has a cycle: {cycle_text(cycle)}")


def cycle_text(cycle, shown=8):
    """'a' -> 'b' -> 'a', at most `shown` members before an ellipsis."""
    names = [f"'{getattr(member, 'name', member)}'" for member in cycle[:shown]]
    if len(cycle) > shown:
        names.append("...")
    return " -> ".join(names + [names[0]])


def toposort(roots, dependencies):
    """Post-order over `dependencies`, iterative so 100,000-node chains work; raises CycleError."""
    order, done, active = [], set(), set()
    for root in roots:
        if root in done:
            continue
        stack = [(root, iter(dependencies(root)))]
        active.add(root)
        while stack:
            node, pending = stack[-1]
            for dep in pending:
                if dep in done:
                    continue
                if dep in active:
                    # the stack runs consumer -> producer from dep back to dep
                    walk = [member for member, _ in stack]
                    raise CycleError(walk[walk.index(dep):][::-1])
                active.add(dep)
                stack.append((dep, iter(dependencies(dep))))
                break
            else:
                stack.pop()
                active.discard(node)
                done.add(node)
                order.append(node)
    return order
