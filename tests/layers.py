#!/usr/bin/env python3
"""The layers of the runtime crate (service/runtime/src): fails when a top-level module
imports one in its own or a higher layer, or when imports close a circle.

Every `crate::<module>` reference counts (use statements, grouped `crate::{a, b}` and inline
paths), and `super::` paths that climb out of a top-level module; comments, string literals
and `#[cfg(test)]` items do not. It also keeps the transport crates (axum, hyper, tower) in
`http`: elsewhere only the `http` crate's types that axum re-exports (`axum::http::...`).

A script rather than cargo-modules: nothing to compile or install in CI (Python 3 stdlib),
it runs in well under a second, and it checks the order we declare below, so an upward
import fails even before it closes a circle. docs/architecture.md § Layers mirrors LAYERS.

Usage: python3 tests/layers.py [path/to/runtime/src]
"""

import re
import sys
from pathlib import Path

# Bottom first. A module may import modules of lower layers only; modules of one layer are
# independent of each other.
LAYERS = [
    ["clock", "events", "config", "rpc"],
    ["registry"],
    ["telemetry"],
    ["cluster", "mrtr", "adapters", "auth"],
    ["connect"],
    ["state"],
    ["pipeline"],
    ["tasks"],
    ["methods", "console"],
    ["http", "reload"],
    ["cli"],
]
# The only module that may use the transport crates.
TRANSPORT_MODULE = "http"
TRANSPORT = re.compile(r"\b(axum|hyper|hyper_util|tower|tower_http)::(\w+)")

# Comments, raw strings, strings, char literals: one left-to-right pass, so `"*/*"` is a
# string and `// "x"` a comment.
NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|\bb?r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S)
CFG_TEST = re.compile(r"#\[cfg\((?:test|all\(test[^\]]*)\)\]")
PATH = re.compile(r"\b(crate|(?:super::)+)(?:::)?(\{|\w+)")


def blank(match):
    """Keeps line numbers (and offsets) while erasing the text."""
    return re.sub(r"[^\n]", " ", match.group(0))


def code_of(text):
    """The source with comments, strings and #[cfg(test)] items blanked out."""
    text = NOISE.sub(blank, text)
    out = list(text)
    for m in CFG_TEST.finditer(text):
        i = m.end()
        # Blank one item: up to its `;` or the end of its body (brackets balanced on the way).
        depth, j = 0, i
        while j < len(text):
            c = text[j]
            if c in "{([":
                depth += 1
            elif c in "})]":
                depth -= 1
                if depth == 0 and c == "}":
                    j += 1
                    break
            elif c == ";" and depth == 0:
                j += 1
                break
            j += 1
        for k in range(m.start(), j):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def group_heads(code, start):
    """Top-level names of a `{a, b::c, d as e}` group starting at `code[start] == '{'`."""
    depth, j, item, heads = 0, start, "", []
    while j < len(code):
        c = code[j]
        if c == "{":
            depth += 1
            if depth == 1:
                j += 1
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                heads.append(item)
                break
        if depth == 1 and c == ",":
            heads.append(item)
            item = ""
        elif depth >= 1:
            item += c
        j += 1
    names = []
    for h in heads:
        m = re.match(r"\s*(\w+)", h)
        if m:
            names.append(m.group(1))
    return names


def module_path(src, path):
    """`http/reply.rs` -> ["http", "reply"]; `http/mod.rs` -> ["http"]; `state.rs` -> ["state"]."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return parts


def root_reexports(src):
    """Names lib.rs re-exports at the crate root (`pub use config::Config;`) -> their module."""
    names = {}
    code = code_of((src / "lib.rs").read_text())
    for m in re.finditer(r"pub use (\w+)::([^;]*);", code):
        rest = m.group(2).strip()
        for name in re.findall(r"\w+", rest.split("{")[-1] if "{" in rest else rest.split("::")[-1]):
            names[name] = m.group(1)
    return names


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "service/runtime/src")
    layer_of = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    modules = set()
    for p in src.iterdir():
        if p.is_dir() and (p / "mod.rs").exists():
            modules.add(p.name)
        elif p.suffix == ".rs" and p.stem not in ("lib", "main"):
            modules.add(p.stem)
    reexports = root_reexports(src)
    problems = []
    for m in sorted(modules - set(layer_of)):
        problems.append(f"module `{m}` is in no layer: add it to LAYERS in tests/layers.py and to docs/architecture.md")
    for m in sorted(set(layer_of) - modules):
        problems.append(f"LAYERS names `{m}`, which is not a module of {src}")

    edges = {}  # (from, to) -> [file:line]
    for path in sorted(src.rglob("*.rs")):
        mpath = module_path(src, path)
        if mpath[0] in ("lib", "main"):
            continue
        here = mpath[0]
        code = code_of(path.read_text())
        line_at = lambda offset: code.count("\n", 0, offset) + 1
        where = lambda offset: f"{path.relative_to(src.parent.parent.parent)}:{line_at(offset)}"
        for m in PATH.finditer(code):
            head, first = m.group(1), m.group(2)
            if head != "crate" and head.count("super") < len(mpath):
                continue  # stays inside this top-level module
            names = group_heads(code, m.end(2) - 1) if first == "{" else [first]
            for name in names:
                if name in ("self", "super", "crate"):
                    continue
                target = name if name in modules else reexports.get(name)
                if target is None:
                    problems.append(f"{where(m.start())}: `crate::{name}` is neither a module nor a root re-export")
                elif target != here:
                    edges.setdefault((here, target), []).append(where(m.start()))
        if here != TRANSPORT_MODULE:
            for t in TRANSPORT.finditer(code):
                if not (t.group(1) == "axum" and t.group(2) == "http"):
                    problems.append(
                        f"{where(t.start())}: `{t.group(0)}` outside `{TRANSPORT_MODULE}`: only it knows the transport"
                    )

    for (a, b), sites in sorted(edges.items()):
        if a in layer_of and b in layer_of and layer_of[b] >= layer_of[a]:
            how = "same layer as" if layer_of[b] == layer_of[a] else "a higher layer than"
            problems.append(f"`{a}` imports `{b}`, {how} itself:\n    " + "\n    ".join(sites))

    for cycle in cycles(modules, edges):
        lines = [f"import cycle: {' -> '.join(cycle + [cycle[0]])}"]
        for a, b in zip(cycle, cycle[1:] + [cycle[0]]):
            lines.append(f"  {a} -> {b}:\n    " + "\n    ".join(edges[(a, b)]))
        problems.append("\n".join(lines))

    if problems:
        print("layers: FAILED", file=sys.stderr)
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    print(f"layers: ok ({len(modules)} modules in {len(LAYERS)} layers, {len(edges)} imports, no cycle)")
    for i, layer in enumerate(LAYERS):
        for m in layer:
            uses = sorted({b for (a, b) in edges if a == m}, key=lambda b: (layer_of.get(b, 0), b))
            print(f"  {i + 1:>2} {m:<10} -> {', '.join(uses) if uses else '(nothing)'}")
    return 0


def cycles(modules, edges):
    """One cycle through each strongly connected component with more than one module."""
    succ = {m: sorted({b for (a, b) in edges if a == m}) for m in modules}
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, []):
            if w not in index:
                strong(w)
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
                comps.append(set(comp))

    for m in sorted(modules):
        if m not in index:
            strong(m)
    found = []
    for comp in comps:
        # Shortest cycle back to the component's first module (BFS inside the component).
        start = min(comp)
        prev, queue, seen = {}, [start], {start}
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in succ[v]:
                if w == start:
                    end = v
                    break
                if w in comp and w not in seen:
                    seen.add(w)
                    prev[w] = v
                    queue.append(w)
        path = [end]
        while path[-1] != start:
            path.append(prev[path[-1]])
        found.append(list(reversed(path)))
    return found


if __name__ == "__main__":
    sys.exit(main())
