#!/usr/bin/env python3
"""Checks that wgdem-core's modules stand on floors: a module imports only modules of its own
floor or below, and no module imports one that imports it back (no loop, at any depth).

    python3 scripts/module-floors.py          check; exit 1 with the offending edges or loops
    python3 scripts/module-floors.py --graph  also print the module graph by floor

Edges are read from the `crate::`, `super::` and `self::` paths of the code (comments and
`#[cfg(test)] mod tests` blocks left out: a doc link or a test may look upwards). A module's
floor is its top-level module's; between the children of one module (shear's config and setup,
say) the same no-loop rule holds, edges to the parent itself aside.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "wgdem-core", "src")

# Lowest first. Physics and data; the reference stepper and the engine interface; the output
# directory; the scene (input, which names what the output holds); the protocols.
FLOORS = [
    ("physics", ["error", "particles", "wall", "loads", "material", "contact", "cell", "cell_servo", "broadphase",
                 "packing", "analysis"]),
    ("stepper", ["cpu", "guard", "backend"]),
    ("output", ["output", "provenance", "checkpoint", "snapshot"]),
    ("scene", ["scene"]),
    ("protocols", ["runner", "protocol", "shear", "element", "contact_case", "bench", "overrides", "lib"]),
]
FLOOR_OF = {m: i for i, (_, ms) in enumerate(FLOORS) for m in ms}


def modules():
    out = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            out["::".join(parts)] = path
    return out


def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def resolve(mods, current, path):
    segs = path.split("::")
    here = current.split("::") if current else []
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "super":
        base = here
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    elif segs[0] == "self":
        base, segs = here, segs[1:]
    else:
        return None
    found = None
    for i in range(len(segs) + 1):
        name = "::".join(base + segs[:i])
        if name in mods:
            found = name
    return found


def edges_of(mods):
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        for hit in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)(?:::\{([^;]*?)\})?", code_of(path)):
            paths = [hit.group(1)]
            for item in (hit.group(2) or "").split(","):
                item = item.strip().split(" as ")[0].strip()
                if re.fullmatch(r"[\w:]+", item or "-"):
                    paths.append(hit.group(1) + "::" + item)
            for p in paths:
                target = resolve(mods, m, p)
                if target is not None and target != m:
                    edges[m].add(target)
    return edges


def loops(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def top(m):
    return m.split("::")[0] if m else "lib"


def main():
    mods = modules()
    edges = edges_of(mods)
    problems = []
    for m in sorted(mods):
        if top(m) not in FLOOR_OF:
            problems.append(f"module {top(m)} has no floor: add it to FLOORS in {sys.argv[0]}")
    # Top-level modules: every edge goes to the same floor or below, and none loops.
    top_edges = {}
    for m, targets in edges.items():
        for t in targets:
            a, b = top(m), top(t)
            if a == b:
                continue
            top_edges.setdefault(a, set()).add(b)
            if FLOOR_OF.get(b, -1) > FLOOR_OF.get(a, len(FLOORS)):
                problems.append(
                    f"{m or 'lib'} ({FLOORS[FLOOR_OF[a]][0]}) imports {t} ({FLOORS[FLOOR_OF[b]][0]}), a floor above it"
                )
    for comp in loops({top(m) for m in mods}, top_edges):
        problems.append("loop between top-level modules: " + " ↔ ".join(comp))
    # Children of one parent: no loop among siblings (edges into the parent itself aside).
    parents = {m.rsplit("::", 1)[0] for m in mods if "::" in m}
    for parent in sorted(parents):
        kids = {m for m in mods if m.startswith(parent + "::") and m.count("::") == parent.count("::") + 1}
        kid_edges = {}
        for m, targets in edges.items():
            if not (m == parent or m.startswith(parent + "::")):
                continue
            src = next((k for k in kids if m == k or m.startswith(k + "::")), None)
            for t in targets:
                dst = next((k for k in kids if t == k or t.startswith(k + "::")), None)
                if src and dst and src != dst:
                    kid_edges.setdefault(src, set()).add(dst)
        for comp in loops(kids, kid_edges):
            problems.append(f"loop inside {parent}: " + " ↔ ".join(comp))
    if "--graph" in sys.argv:
        for i, (name, members) in enumerate(FLOORS):
            print(f"floor {i} ({name}):")
            for a in members:
                below = sorted(top_edges.get(a, ()))
                print(f"  {a} -> {', '.join(below) if below else '(nothing)'}")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"module floors: {len(mods)} modules of wgdem-core on {len(FLOORS)} floors, no loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
