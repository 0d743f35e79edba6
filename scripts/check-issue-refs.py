#!/usr/bin/env python3
"""check-issue-refs.py -- no comment, message or name in the code points at an issue number.

A reader of the tree cannot open the project's issues: an issue's number in parentheses beside
a choice tells them nothing, where "the pool's first use cost 14-16 ms of a one-launch run on an
H200" tells them why. So the code, scripts, tests, build files and public headers never name an
issue by its number; they say the reason itself (what was measured, what went wrong, what the
user expects). Any spelling is found: the word "issue" or "issues" (any case) followed by a
number, with or without '#', a space, an underscore or a line break between them, in a comment,
a message or a name, or in a comment wrapped after the word. "tissue", "issued" or "an issue
with 5 threads" are ordinary words. Markdown documents are not read: docs/STATUS.md and
docs/BENCHMARKS.md keep the history, with its numbers.

Read: every text file under src/, tools/, bench/, tests/, scripts/, include/, examples/,
cmake/ and .ci/, and the top-level CMakeLists.txt and Makefile. This script's own self-test
data (between its two lines that begin "# SELF-TEST DATA") is skipped.

Usage:  check-issue-refs.py [--self-test] [ROOT]
        ROOT: the repository (default: the folder above this script)
Exit status: 0 when no issue number is found, 1 when one is (each printed as FILE:LINE: the
text, with the hint to say the reason instead) or the self-test fails, 2 for a wrong command
line.
"""
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import check_common  # noqa: E402 (after the line above)

FOLDERS = ("src", "tools", "bench", "tests", "scripts", "include", "examples", "cmake", ".ci")
TOP_FILES = ("CMakeLists.txt", "Makefile")
SELF = os.path.join("scripts", "check-issue-refs.py")
SKIP_MARK = "SELF-TEST DATA"
HINT = ("an issue number a reader cannot open: say the reason instead (what was measured, "
        "what went wrong, what the user expects)")

# The word "issue" or "issues", not part of a longer one ("tissue", "issued"), and a number
# after it, with spaces, '#', '_' or '-' between or nothing.
NUMBERED = re.compile(r"(?<![A-Za-z])issues?(?![A-Za-z])[ \t_#-]*#?[0-9]", re.IGNORECASE)
# The word at the end of a line and the number at the start of the next (a wrapped comment).
AT_END = re.compile(r"(?<![A-Za-z])issues?[ \t#]*$", re.IGNORECASE)
AT_START = re.compile(r"^\s*(?:\*|#|//|--)?\s*#?[0-9]")


def text_files(root):
    """Every file to read, relative to root, in a stable order."""
    for name in TOP_FILES:
        if os.path.isfile(os.path.join(root, name)):
            yield name
    for folder in FOLDERS:
        for here, dirs, names in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")  # Python's, ignored by git
            for name in sorted(names):
                yield os.path.relpath(os.path.join(here, name), root).replace(os.sep, "/")


def read_lines(path):
    """The file's lines, or None for a file that is not text (NUL bytes, not UTF-8)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None


def findings(rel, lines):
    """(line number, text) of each issue number in one file's lines."""
    found, skipping = [], False
    for number, text in enumerate(lines, 1):
        if rel == SELF.replace(os.sep, "/") and text.strip().startswith("# " + SKIP_MARK):
            skipping = not skipping
            continue
        if skipping:
            continue
        wrapped = (AT_END.search(text) and number < len(lines)
                   and AT_START.match(lines[number]))
        if NUMBERED.search(text) or wrapped:
            found.append((number, text.strip()))
    return found


def check(root):
    """The problems (one printable line each) and the number of files read."""
    problems, count = [], 0
    for rel in text_files(root):
        lines = read_lines(os.path.join(root, rel))
        if lines is None:
            continue
        count += 1
        for number, text in findings(rel, lines):
            problems.append(f"{rel}:{number}: {text}\n    {HINT}")
    return problems, count


def said(tree):
    """What the check says of `tree` ({path: text}), written to a fresh folder."""
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, tree)
        return "\n".join(check(tmp)[0])


def self_test():
    """Trees with an issue number in each kind of file, and one with only ordinary words."""
    # SELF-TEST DATA (not read by the check of the repository)
    cases = [
        ("a C comment", {"src/a/x.c": "int x; /* fixed (issue 12) */\n"}, ["src/a/x.c:1:"]),
        ("a header, '#'", {"include/x.h": "/* see Issue #3 */\n"}, ["include/x.h:1:"]),
        ("two numbers", {"tools/y.c": "\n// issues 4 and 5: slow\n"}, ["tools/y.c:2:"]),
        ("a name", {"tests/fake/f.c": "static int fake_issue26_g2;\n"}, ["tests/fake/f.c:1:"]),
        ("a comment wrapped after the word",
         {"bench/b.c": "/* measured in the\n * issue\n * 24 bench */\n"}, ["bench/b.c:2:"]),
        ("a shell script", {"tests/cli/t.sh": "# ISSUE 7: exit 2\n"}, ["tests/cli/t.sh:1:"]),
        ("a message string", {"examples/e.c": 'puts("see issue 9");\n'}, ["examples/e.c:1:"]),
        ("the top CMakeLists.txt", {"CMakeLists.txt": "# Issue 27: checks\n"},
         ["CMakeLists.txt:1:"]),
        ("a CMake file in cmake/", {"cmake/c.cmake": "# (issue 2)\n"}, ["cmake/c.cmake:1:"]),
    ]
    good = {"src/a/ok.c": ("/* tissue 12, the issued 3 launches, reissue 4, an issue with 5\n"
                           " * threads, known issues: none; #define ISSUE_LIMIT 8 */\n"),
            "tools/ok.sh": "# an issue\n# with the queue: 16 ahead\n",
            "docs/STATUS.md": "issue 25 resolved\n", "README.md": "(issue 3)\n",
            "src/a/blob.bin": "issue 1\0\n"}
    # SELF-TEST DATA (end)
    failed = check_common.failed_cases(cases, said)
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, good)
        problems, count = check(tmp)
    if problems or count != 2:
        failed += 1
        print(f"self-test: a tree of ordinary words was refused or misread ({count} files read, "
              f"2 expected): {problems}")
    return check_common.self_test_status(failed, len(cases) + 1)


def main(argv):
    root, status = check_common.repo_root(argv, __doc__, self_test, ("src", "tools"))
    if root is None:
        return status
    problems, count = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-issue-refs: {len(problems)} issue number{'s' if len(problems) != 1 else ''}"
              f" in {count} files: say the reason instead")
        return 1
    print(f"check-issue-refs: {count} files read, no issue number")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
