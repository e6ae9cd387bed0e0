"""Topological order over any dependency function, without recursion."""


def toposort(roots, dependencies):
    """Post-order over `dependencies`, iterative so 100,000-node chains work; raises on a cycle."""
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
                    raise ValueError(f"the graph has a cycle through '{getattr(dep, 'name', dep)}'")
                active.add(dep)
                stack.append((dep, iter(dependencies(dep))))
                break
            else:
                stack.pop()
                active.discard(node)
                done.add(node)
                order.append(node)
    return order
