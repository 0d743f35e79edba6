#!/usr/bin/env python3
"""check-unique-names.py -- no two C files of src/ and tools/ share a file name.

A name means one thing: `json.c` cannot be the library's strict JSON reader in
src/tune/ and the command's JSON writer in tools/, nor `run.h` the header of the library's
tune and of `cucore run`. Messages, the call_circles check, the funclen allow-list, debuggers
and people name a file by its basename, so every C source and header (.c, .h) under src/
(every folder, at any depth) and tools/ has a basename no other one has. `x.c` and `x.h` are
two names (a unit and its header). A name that must stay twice for now is listed in
scripts/unique-names-allow.txt, one `NAME  # why` a line; a listed name that is no longer
found twice is reported, so the list only shrinks.

Usage:  check-unique-names.py [--self-test] [ROOT]
        ROOT: the repository (default: the folder above this script); src/ and tools/ are read
Exit status: 0 when every name is unique or listed, 1 when one is not or an allow-list line is
wrong (each printed with every path that has the name, and how to fix it), 2 for a wrong
command line.
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import check_common  # noqa: E402 (after the line above)

FOLDERS = ("src", "tools")
EXTENSIONS = (".c", ".h")
ALLOW = os.path.join("scripts", "unique-names-allow.txt")


def read_allow(path):
    """{name: line number}, and the problems of the list itself."""
    return check_common.read_allow(path, ALLOW, r"[^\s/]+\.[ch]", "not a file name such as json.c",
                                   "why the name stays twice and what would end it")


def check(root):
    """The problems, the number of files read and the names found twice but allowed."""
    allowed, problems = read_allow(os.path.join(root, ALLOW))
    paths = {}
    count = 0
    for rel in check_common.source_files(root, FOLDERS, EXTENSIONS):
        count += 1
        paths.setdefault(os.path.basename(rel), []).append(rel)
    twice = {name: where for name, where in paths.items() if len(where) > 1}
    for name in sorted(twice):
        if name not in allowed:
            problems.append(f"{name}: {len(twice[name])} files have this name: "
                            f"{', '.join(twice[name])}; rename all but one so that the name says "
                            f"what each file is (it means one thing across src/ and tools/)")
    for name, number in sorted(allowed.items(), key=lambda kv: kv[1]):
        if name not in twice:
            problems.append(f"{ALLOW}:{number}: {name} is no longer found twice in "
                            f"{'/ and '.join(FOLDERS)}/; remove the line")
    listed = sorted((name, twice[name]) for name in twice if name in allowed)
    return problems, count, listed


def said(tree, allow):
    """What the check says of `tree` (and a tools/ file) with the allow-list `allow`."""
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, dict(tree, **{ALLOW: allow, "tools/keep.c": ""}))
        return "\n".join(check(tmp)[0])


def self_test():
    """Trees with names twice (across the two folders, within src/, deep), listed or not."""
    cases = [
        ("a name in src/ and in tools/", {"src/tune/json.c": "", "tools/json.c": ""}, "",
         ["json.c: 2 files have this name: src/tune/json.c, tools/json.c"]),
        ("a name in two folders of src/", {"src/runtime/x.c": "", "src/graph/x.c": ""}, "",
         ["x.c: 2 files have this name: src/graph/x.c, src/runtime/x.c"]),
        ("a header deep in src/ and in tools/", {"src/a/b/run.h": "", "tools/run.h": ""}, "",
         ["run.h: 2 files have this name: src/a/b/run.h, tools/run.h"]),
        ("an allow-list line without a reason", {"src/a/x.c": "", "tools/x.c": ""}, "x.c\n",
         ["x.c gives no reason"]),
        ("an allow-list line for a name found once", {"src/a/x.c": ""}, "x.c  # pending\n",
         ["x.c is no longer found twice"]),
        ("an allow-list line that is no file name", {"src/a/x.c": ""}, "src/a/x.c  # path\n",
         ["'src/a/x.c' is not a file name"]),
    ]
    failed = check_common.failed_cases(cases, said)
    good = {"src/tune/json.c": "", "src/tune/json.h": "", "tools/json_write.c": "",
            "src/runtime/capture.c": "", "src/graph/capture.c": "", "tools/CMakeLists.txt": "",
            "src/base/CMakeLists.txt": "", "tools/README": "", "src/README": "",
            ALLOW: "# names twice\ncapture.c  # a test entry\n"}
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, good)
        problems, count, listed = check(tmp)
    if problems or count != 5 or [n for n, _ in listed] != ["capture.c"]:
        failed += 1
        print(f"self-test: a tree that keeps the rule was refused or misread ({count} files "
              f"found, 5 expected; allowed {listed}): {problems}")
    return check_common.self_test_status(failed, len(cases) + 1)


def main(argv):
    root, status = check_common.repo_root(argv, __doc__, self_test, FOLDERS)
    if root is None:
        return status
    problems, count, listed = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-unique-names: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
              f"({count} files in {', '.join(FOLDERS)})")
        return 1
    twice = "; ".join(f"{name} ({', '.join(where)})" for name, where in listed) or "none"
    print(f"check-unique-names: {count} files in {', '.join(FOLDERS)}, every name once but "
          f"those of {ALLOW}: {twice}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
