#!/usr/bin/env python3
"""check-layers.py -- src/ is built in floors; this check keeps it so.

Each folder of src/ is one stage of the data path, lowest first (LAYERS below; ARCHITECTURE.md
says what each holds). A file may include headers of its own folder and of folders below it,
never of a folder above, and no chain of includes may come back to where it started.

Every include of cucore's own headers is written from src/ ("binary/elf.h"), so the folder is
in the text; a bare "name.h" must be a file beside the including one. The public header
"cucore.h" may be included anywhere. An include that names no file of src/ is an error too.

Usage:  check-layers.py [SRC_DIR]      check a tree (default: the src/ beside this script)
        check-layers.py --self-test    prove the check catches what it must, then check src/
Exit status: 0 when the tree keeps the rules, 1 when it breaks one (each break is printed as
FILE:LINE: what was included, and which rule it breaks), 2 for a wrong command line.
"""
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import check_common  # noqa: E402 (after the line above)

# The floors, lowest first. A new folder must be added here, at its place in the data path.
LAYERS = ["base", "loader", "runtime", "memory", "binary", "toolchain", "object", "compile", "exec",
          "graph", "tune"]
PUBLIC = {"cucore.h"}
SOURCE_EXT = (".c", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def rank_of(folder):
    return LAYERS.index(folder) if folder in LAYERS else None


def scan(src):
    """Returns (files, problems): files maps 'folder/name' to [(line, target), ...]."""
    files, problems = {}, []
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if os.path.isfile(path):
            if entry.endswith(SOURCE_EXT):
                problems.append(f"src/{entry}: a source file outside every folder; put it in "
                                f"the folder of its stage ({', '.join(LAYERS)})")
            continue
        if rank_of(entry) is None:
            problems.append(f"src/{entry}/: a folder that is not a floor; add it to LAYERS in "
                            f"scripts/check-layers.py at its place ({' < '.join(LAYERS)}) and "
                            f"to ARCHITECTURE.md")
            continue
        for root, _dirs, names in os.walk(path):
            for name in sorted(names):
                if not name.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
                if rel.count("/") != 1:
                    problems.append(f"src/{rel}: folders are one level deep; move it up into "
                                    f"src/{entry}/")
                    continue
                includes = []
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    for number, text in enumerate(f, 1):
                        m = INCLUDE.match(text)
                        if m:
                            includes.append((number, m.group(1)))
                files[rel] = includes
    return files, problems


def resolve(rel, target, files):
    """The 'folder/name' an include names, or None when it names no file of src/."""
    if "/" in target:
        return target if target in files else None
    beside = rel.split("/")[0] + "/" + target
    return beside if beside in files else None


def check(src):
    files, problems = scan(src)
    graph = {rel: [] for rel in files}
    for rel, includes in files.items():
        folder = rel.split("/")[0]
        for line, target in includes:
            if target in PUBLIC:
                continue
            dest = resolve(rel, target, files)
            if dest is None:
                problems.append(f"src/{rel}:{line}: includes \"{target}\", which is no file of "
                                f"src/; write cucore's own headers as \"FOLDER/NAME.h\"")
                continue
            graph[rel].append((line, dest))
            dest_folder = dest.split("/")[0]
            if rank_of(dest_folder) > rank_of(folder):
                problems.append(
                    f"src/{rel}:{line}: includes \"{target}\": {folder}/ (floor "
                    f"{rank_of(folder)}) may include its own folder and lower ones, not "
                    f"{dest_folder}/ (floor {rank_of(dest_folder)}); move the shared part down "
                    f"or turn the call around")
    problems.extend(find_cycles(graph))
    return problems


def find_cycles(graph):
    """Every include cycle, once, as 'a -> b -> a' with the lines that close it."""
    problems, state, stack, seen = [], {}, [], set()

    def visit(node):
        state[node] = 1
        stack.append(node)
        for line, dest in graph.get(node, []):
            if state.get(dest) == 1:
                loop = stack[stack.index(dest):] + [dest]
                key = frozenset(loop)
                if key not in seen:
                    seen.add(key)
                    problems.append(f"src/{node}:{line}: closes an include cycle: "
                                    + " -> ".join(f"src/{n}" for n in loop))
            elif dest not in state:
                visit(dest)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return problems


def said(tree):
    """What the check says of the src/ tree `tree`."""
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, tree)
        return "\n".join(check(tmp))


def self_test():
    """Trees that break each rule must fail, naming the file, line and include."""
    cases = [
        ("an include of a higher floor",
         {"base/a.h": '#include "exec/k.h"\n', "exec/k.h": "\n"},
         ["src/base/a.h:1", f"exec/ (floor {rank_of('exec')})"]),
        ("an include cycle inside one folder",
         {"binary/x.h": '#include "binary/y.h"\n', "binary/y.h": '\n#include "x.h"\n'},
         ["closes an include cycle", "src/binary/x.h -> src/binary/y.h -> src/binary/x.h"]),
        ("an include of no file",
         {"exec/k.c": '#include "internal.h"\n'},
         ["src/exec/k.c:1", "no file of src/"]),
        ("a folder that is no floor",
         {"graphs/g.c": "\n"}, ["src/graphs/", "not a floor"]),
        ("a source beside the folders",
         {"stray.c": "\n"}, ["src/stray.c", "outside every folder"]),
    ]
    failed = check_common.failed_cases(cases, said)
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(
            tmp, {"base/b.h": "\n", "exec/k.c": '#include "base/b.h"\n#include "cucore.h"\n'})
        ok = check(tmp)
    if ok:
        failed += 1
        print(f"self-test: a tree that keeps the rules was refused: {ok}")
    return check_common.self_test_status(failed, len(cases) + 1)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    default_src = os.path.join(os.path.dirname(here), "src")
    status, args = check_common.take_front(argv[1:], __doc__, self_test)
    if status is not None:
        return status
    status, src = check_common.one_path(args, "usage: check-layers.py [--self-test] [SRC_DIR]")
    if status is not None:
        return status
    src = src or default_src
    if not os.path.isdir(src):
        print(f"check-layers: {src} is not a directory", file=sys.stderr)
        return 2
    problems = check(src)
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} break{'s' if len(problems) != 1 else ''} of the "
              f"floors ({' < '.join(LAYERS)})")
        return 1
    files, _ = scan(src)
    print(f"check-layers: {len(files)} files in {len(LAYERS)} floors "
          f"({' < '.join(LAYERS)}): no include runs upward, no include cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
