#!/usr/bin/env python3
"""Finds import circles between the modules of each Rust crate: module A uses
something from module B and B (or a module B leads to) uses something from A.

For every crate found under the given directories (a crate directory, a cargo
workspace, or any directory holding crates; default: analyzer/crates/* and
datasets/generate), each target under src/ (lib.rs, main.rs, src/bin/*) is
read from its root file through its `mod` declarations (files, `#[path]` and
inline `mod x { ... }` blocks). A module depends on another when it names it
or one of its items in `use crate::...`, `use super::...`, `use self::...` or
a `crate::a::B` / `super::B` path in code; a name re-exported by a `use`
(e.g. the crate root's `pub use tracker::Tracker`) is followed to the module
that defines it. A module's `mod` declarations are edges to its submodules
too, but uses between a module and its own ancestors or descendants are not:
a submodule using its parent (`use super::*`) is not a circle.

Prints every elementary cycle as `crate: a -> b -> a` (modules by path from
the crate root, which is `crate`) and exits 1 if there is any; else prints
`rust module cycles: none (N crates, M modules)` and exits 0. Exit status 2:
a directory holds no crate.

  scripts/check-rust-cycles.py                   the default crates
  scripts/check-rust-cycles.py analyzer          every crate of that workspace
  scripts/check-rust-cycles.py --edges some/crate    also print the graph
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = [ROOT / "analyzer" / "crates", ROOT / "datasets" / "generate"]
SKIP_DIRS = {"target", "node_modules"}
MAX_CYCLES = 1000


# --- Source text: comments out, string and char literals blanked ---------------------------------------------------

CHAR_LITERAL = re.compile(r"'(?:[^\\'\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.))'")
RAW_STRING = re.compile(r'b?r(#*)"')
IDENT_CHAR = re.compile(r"\w")


def strip_source(text: str) -> tuple[str, list[str]]:
    """The code of `text` with comments replaced by spaces and each string
    literal by `"S<n>"` (its contents are `strings[n]`); char literals become
    `'c'`. Newlines are kept, so braces still match and nothing is joined."""
    out: list[str] = []
    strings: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
            out.append(" ")
        elif c in "rb" and not (i and IDENT_CHAR.match(text[i - 1])) and (m := RAW_STRING.match(text, i)):
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end
            strings.append(text[m.end() : end])
            out.append(f'"S{len(strings) - 1}"' + "\n" * text.count("\n", i, end))
            i = end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            strings.append(text[i + 1 : j])
            out.append(f'"S{len(strings) - 1}"' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and (m := CHAR_LITERAL.match(text, i)):
            out.append("'c'")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out), strings


def matching_brace(code: str, open_at: int) -> int:
    """Index of the `}` closing the `{` at `open_at` (or the end of `code`)."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


# --- use trees --------------------------------------------------------------------------------------------------------

USE_ITEM = re.compile(r"(?<![\w$])use\s+([^;]*);")
PATH_IN_CODE = re.compile(r"(?<![\w:$])(crate|super|self)((?:\s*::\s*(?:\w+|\*))+)")
MOD_ITEM = re.compile(r"(?<![\w$])mod\s+(r#)?(\w+)\s*([;{])")
# A `#[path = "..."]` among the attributes just before a `mod` (strings are `"S<n>"` here).
PATH_ATTR = re.compile(r'#\[\s*path\s*=\s*"S(\d+)"\s*\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?$')
ITEM_DEF = re.compile(r"(?<![\w$])(?:struct|enum|union|trait|type|fn|const|static|macro_rules!)\s+(?:r#)?(\w+)")


def split_top(s: str, sep: str = ",") -> list[str]:
    """`s` split at `sep` outside braces."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(s):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:k])
            start = k + 1
    parts.append(s[start:])
    return [p.strip() for p in parts if p.strip()]


def use_tree(tree: str, prefix: list[str]) -> list[tuple[list[str], str]]:
    """The (path, bound name) pairs of one use tree; the name is `*` for a glob
    and the path ends with `self` when `{self}` binds the module itself."""
    tree = " ".join(tree.split())
    if "{" in tree and tree.endswith("}"):
        head, _, body = tree.partition("{")
        segs = [s.strip() for s in head.split("::") if s.strip()]
        out: list[tuple[list[str], str]] = []
        for sub in split_top(body[:-1]):
            out += use_tree(sub, prefix + segs)
        return out
    alias = None
    if " as " in tree:
        tree, alias = (x.strip() for x in tree.rsplit(" as ", 1))
    segs = [s.strip() for s in tree.split("::")]
    if segs and segs[0] == "":  # `::std::x`: an extern crate
        return []
    path = prefix + segs
    if path[-1] == "*":
        return [(path[:-1], "*")]
    if path[-1] == "self":
        path = path[:-1]
        return [(path, alias or path[-1])] if path else []
    return [(path, alias or path[-1])]


# --- modules ----------------------------------------------------------------------------------------------------------


@dataclass
class Module:
    path: tuple[str, ...]  # () for the crate root
    children: dict[str, tuple[str, ...]] = field(default_factory=dict)
    uses: list[tuple[list[str], str]] = field(default_factory=list)  # (path, bound name)
    code_paths: list[list[str]] = field(default_factory=list)
    items: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return "::".join(self.path) or "crate"


class Target:
    """One crate target (lib, main, a bin): its modules and their dependencies."""

    def __init__(self, label: str, root_file: Path):
        self.label = label
        self.modules: dict[tuple[str, ...], Module] = {}
        self.missing: list[str] = []
        self._load_file(root_file, (), root_file.parent)

    # Reading -----------------------------------------------------------------------------------------------------

    def _load_file(self, file: Path, path: tuple[str, ...], child_dir: Path) -> None:
        code, strings = strip_source(file.read_text(encoding="utf-8", errors="replace"))
        self._load_body(code, strings, path, file.parent, child_dir)

    def _load_body(self, code: str, strings: list[str], path: tuple[str, ...], file_dir: Path, child_dir: Path) -> None:
        """Reads one module's code: its inline submodules are cut out and read
        on their own, its file submodules are opened."""
        module = self.modules.setdefault(path, Module(path))
        own: list[str] = []
        at = 0
        for m in MOD_ITEM.finditer(code):
            if m.start() < at:
                continue  # inside an inline module already read
            name = m.group(2)
            child = (*path, name)
            module.children[name] = child
            attr = PATH_ATTR.search(code[max(0, m.start() - 400) : m.start()])
            if m.group(3) == "{":
                end = matching_brace(code, m.end() - 1)
                own.append(code[at : m.start()])
                inner_dir = child_dir / name
                if attr:
                    inner_dir = child_dir / strings[int(attr.group(1))]
                self._load_body(code[m.end() : end], strings, child, file_dir, inner_dir)
                at = end + 1
            else:
                self._load_mod_file(child, name, attr and strings[int(attr.group(1))], file_dir, child_dir)
        own.append(code[at:])
        body = "".join(own)
        for u in USE_ITEM.finditer(body):
            module.uses += use_tree(u.group(1), [])
        without_uses = USE_ITEM.sub(" ", body)
        for p in PATH_IN_CODE.finditer(without_uses):
            module.code_paths.append([p.group(1)] + [s.strip() for s in p.group(2).split("::") if s.strip()])
        module.items |= {m.group(1) for m in ITEM_DEF.finditer(body)}

    def _load_mod_file(
        self, child: tuple[str, ...], name: str, path_attr: str | None, file_dir: Path, child_dir: Path
    ) -> None:
        if path_attr is not None:  # the file then behaves as a mod.rs
            file = (file_dir / path_attr).resolve()
            candidates = [file]
            grandchildren = file.parent
        else:
            candidates = [child_dir / f"{name}.rs", child_dir / name / "mod.rs"]
            grandchildren = child_dir / name
        for file in candidates:
            if file.is_file():
                self._load_file(file, child, grandchildren)
                return
        self.missing.append("::".join(child))
        self.modules.setdefault(child, Module(child))

    # Resolving ---------------------------------------------------------------------------------------------------

    def _resolve(self, start: tuple[str, ...], segs: list[str], depth: int = 0) -> tuple[str, ...] | None:
        """The module a path written in module `start` leads to: the module it
        names, or the one defining the item it names; None when the path
        leads out of the crate (another crate, std)."""
        if depth > 20 or not segs:
            return None
        if segs[0] == "crate":
            return self._walk((), segs[1:], depth, relative=False)
        if segs[0] == "super":
            at = start
            while segs and segs[0] == "super":
                at, segs = at[:-1], segs[1:]
            return self._walk(at, segs, depth, relative=False)
        if segs[0] == "self":
            return self._walk(start, segs[1:], depth, relative=False)
        return self._walk(start, segs, depth, relative=True)

    def _walk(self, at: tuple[str, ...], segs: list[str], depth: int, relative: bool) -> tuple[str, ...] | None:
        for k, seg in enumerate(segs):
            module = self.modules.get(at)
            if module is None or seg in ("*", "self"):
                return at
            if seg in module.children:
                at = module.children[seg]
                continue
            if seg in module.items:
                return at
            target = self._bound(module, seg, depth)
            if target is not None:
                names_module, target = target
                return self._walk(target, segs[k + 1 :], depth + 1, relative=False) if names_module else target
            return None if relative and k == 0 else at
        return at

    def _bound(self, module: Module, seg: str, depth: int) -> tuple[bool, tuple[str, ...]] | None:
        """Where a name imported or re-exported into `module` by a `use` comes
        from, and whether it names that module itself (`use crate::a::{self}`)
        rather than one of its items."""
        for path, bound in module.uses:
            if bound == seg:
                target = self._resolve(module.path, path, depth + 1)
                if target is None:
                    return None
                return (bool(target) and target[-1] == path[-1]), target
        for path, bound in module.uses:  # a glob import that brings the name
            if bound == "*":
                target = self._resolve(module.path, path, depth + 1)
                if target is not None and target != module.path and target in self.modules:
                    found = self._walk(target, [seg], depth + 1, relative=True)
                    if found is not None:
                        return False, found
        return None

    def edges(self) -> dict[tuple[str, ...], dict[tuple[str, ...], str]]:
        """module -> {module it depends on: "mod" (declares it) or "use"}.
        Uses between a module and its ancestors or descendants are left out."""
        graph: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {p: {} for p in self.modules}
        for p, module in self.modules.items():
            for child in module.children.values():
                graph[p][child] = "mod"
            for segs in [path for path, _ in module.uses] + module.code_paths:
                target = self._resolve(p, segs)
                if target is not None and target in self.modules and not nested(p, target):
                    graph[p].setdefault(target, "use")
        return graph


def nested(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether one module is the other or contains it."""
    return a[: len(b)] == b or b[: len(a)] == a


# --- cycles -----------------------------------------------------------------------------------------------------------


def strongly_connected(graph: dict[tuple[str, ...], dict[tuple[str, ...], str]]) -> dict[tuple[str, ...], int]:
    """Each module's strongly connected component (Tarjan, iterative)."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    comp: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w not in comp:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    while True:
                        w = stack.pop()
                        comp[w] = index[v]
                        if w == v:
                            break
    return comp


def cycles(graph: dict[tuple[str, ...], dict[tuple[str, ...], str]]) -> list[list[tuple[str, ...]]]:
    """Every elementary cycle, once, from its smallest module (at most
    MAX_CYCLES of them)."""
    comp = strongly_connected(graph)
    order = sorted(graph)
    rank = {v: k for k, v in enumerate(order)}
    found: list[list[tuple[str, ...]]] = []
    for s in order:
        stack = [(s, [s])]
        while stack and len(found) < MAX_CYCLES:
            v, path = stack.pop()
            for w in sorted(graph[v], reverse=True):
                if comp[w] != comp[s]:
                    continue
                if w == s:
                    found.append([*path, s])
                elif rank[w] > rank[s] and w not in path:
                    stack.append((w, [*path, w]))
    return sorted(found, key=lambda c: (len(c), c))


# --- crates -----------------------------------------------------------------------------------------------------------


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def find_crates(d: Path) -> list[Path]:
    """The package directories in `d`: `d` itself, a workspace's members, or
    any found below it."""
    manifest = read_toml(d / "Cargo.toml")
    found: list[Path] = []
    if "package" in manifest:
        found.append(d)
    members = manifest.get("workspace", {}).get("members", [])
    excluded = {(d / e).resolve() for e in manifest.get("workspace", {}).get("exclude", [])}
    for pattern in members:
        for m in sorted(d.glob(pattern)):
            if m.resolve() not in excluded and "package" in read_toml(m / "Cargo.toml"):
                found.append(m)
    if not manifest and d.is_dir():
        for sub in sorted(d.iterdir()):
            if sub.is_dir() and not sub.name.startswith(".") and sub.name not in SKIP_DIRS:
                found += find_crates(sub)
    return found


def targets(crate: Path) -> list[Target]:
    manifest = read_toml(crate / "Cargo.toml")
    name = manifest["package"].get("name", crate.name)
    out = []
    lib = crate / manifest.get("lib", {}).get("path", "src/lib.rs")
    if lib.is_file():
        out.append(Target(name, lib))
    bins: dict[Path, str] = {}
    for b in manifest.get("bin", []):
        if "path" in b:
            bins[(crate / b["path"]).resolve()] = b.get("name", name)
    if (crate / "src/main.rs").is_file():
        bins.setdefault((crate / "src/main.rs").resolve(), name)
    for f in sorted((crate / "src/bin").glob("*.rs")) + sorted((crate / "src/bin").glob("*/main.rs")):
        bins.setdefault(f.resolve(), f.stem if f.name != "main.rs" else f.parent.name)
    for file, bin_name in sorted(bins.items()):
        out.append(Target(f"{name} (bin {bin_name})" if out or bin_name != name else name, file))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check-rust-cycles.py",
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dirs", nargs="*", type=Path, help="crate or workspace directories (default: analyzer/crates datasets/generate)"
    )
    parser.add_argument("--edges", action="store_true", help="also print every dependency between modules")
    args = parser.parse_args(argv)
    dirs = args.dirs or DEFAULT_DIRS

    crates: list[Path] = []
    for d in dirs:
        found = find_crates(d)
        if not found:
            print(f"check-rust-cycles: no crate in {d}", file=sys.stderr)
            return 2
        crates += found
    n_modules, bad = 0, 0
    for crate in crates:
        for t in targets(crate):
            graph = t.edges()
            n_modules += len(graph)
            for m in t.missing:
                print(f"{t.label}: module {m}: file not found", file=sys.stderr)
            if args.edges:
                for a in sorted(graph):
                    for b, how in sorted(graph[a].items()):
                        print(f"{t.label}: {name(a)} -> {name(b)} ({how})")
            for c in cycles(graph):
                bad += 1
                print(f"{t.label}: {' -> '.join(name(m) for m in c)}")
    if bad:
        print(f"rust module cycles: {bad} ({len(crates)} crates, {n_modules} modules)", file=sys.stderr)
        return 1
    print(f"rust module cycles: none ({len(crates)} crates, {n_modules} modules)")
    return 0


def name(path: tuple[str, ...]) -> str:
    return "::".join(path) or "crate"


if __name__ == "__main__":
    sys.exit(main())
