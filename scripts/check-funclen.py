#!/usr/bin/env python3
"""check-funclen.py -- no function of src/ or tools/ runs over 80 lines, unless it is a table.

A long function that runs several phases in a row is split into named steps with one cleanup
path (docs/STYLE.md). A few functions read like tables (a flat list of independent checks, a
switch over records) and are clearer whole: those are named in scripts/funclen-allow.txt, one
`FILE:FUNCTION  # why it is a table` a line, FILE relative to the repository.

A function's length is counted from the line of its opening brace to the line of its closing
brace, both included. The scan skips comments, string and character literals and preprocessor
lines (a function written by a macro is not seen).

Usage:  check-funclen.py [--self-test] [--limit N] [ROOT]
        ROOT: the repository (default: the folder above this script); src/ and tools/ are read
Exit status: 0 when every long function is allowed, 1 when one is not or an allow-list line is
wrong (each printed as FILE:LINE: what, and how to fix it), 2 for a wrong command line.
"""
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import check_common  # noqa: E402 (after the line above)

LIMIT = 80
FOLDERS = ("src", "tools")
EXTENSIONS = (".c", ".h")
ALLOW = os.path.join("scripts", "funclen-allow.txt")
NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof", "_Alignof", "alignof",
             "__attribute__", "_Static_assert", "defined"}
IDENT = re.compile(r"[A-Za-z_]\w*")


def blank_out(text):
    """The text with comments, literals and preprocessor lines turned to spaces, lines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # A directive runs to the end of the line, or further after a backslash.
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                    continue
                j += 1
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append(c + "".join(ch if ch == "\n" else " " for ch in text[i + 1:j]) + c)
            i = j + 1
        else:
            if c == "\n":
                line_start = True
            out.append(c)
            i += 1
    return "".join(out)


def function_name(head):
    """The name a definition's head declares ('static int f(int a)' -> 'f'), or None."""
    head = head.strip()
    # Attributes after the parameter list: 'void f(void) __attribute__((noreturn))'.
    head = re.sub(r"(__attribute__|__declspec)\s*\(\(.*?\)\)\s*$", "", head).strip()
    if not head.endswith(")"):
        return None
    depth = 0
    for k in range(len(head) - 1, -1, -1):
        if head[k] == ")":
            depth += 1
        elif head[k] == "(":
            depth -= 1
            if depth == 0:
                before = head[:k].rstrip()
                m = re.search(r"([A-Za-z_]\w*)$", before)
                if not m or m.group(1) in NOT_NAMES:
                    return None
                # An initializer or a macro's argument list at file scope is not a definition.
                if "=" in re.sub(r"\(.*?\)", "", before):
                    return None
                return m.group(1)
    return None


def functions(text):
    """Yields (name, first line, length in lines) for each function defined in C text."""
    clean = blank_out(text)
    depth, head, line = 0, [], 1
    open_name, open_line = None, 0
    transparent = 0  # extern "C" { ... } blocks do not count as depth
    for k, c in enumerate(clean):
        if c == "\n":
            line += 1
        if depth == 0:
            if c == "{":
                text_head = "".join(head)
                if re.search(r'\bextern\s*""\s*$', text_head):
                    transparent += 1
                    head = []
                    continue
                open_name, open_line = function_name(text_head), line
                depth = 1
                head = []
            elif c == ";":
                head = []
            elif c == "}" and transparent:
                transparent -= 1
                head = []
            else:
                head.append(c)
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if open_name:
                    yield open_name, open_line, line - open_line + 1
                open_name = None
                head = []


def read_allow(path):
    """{(file, function): line number}, and the problems of the list itself."""
    return check_common.read_allow(
        path, ALLOW, r"([^\s:]+):([A-Za-z_]\w*)", "not FILE:FUNCTION",
        "why it is a table (a flat list of independent checks, a switch over records)")


def check(root, limit):
    allowed, problems = read_allow(os.path.join(root, ALLOW))
    seen, long_ones, count = {}, [], 0
    for rel in check_common.source_files(root, FOLDERS, EXTENSIONS):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, length in functions(text):
            count += 1
            seen[(rel, name)] = max(length, seen.get((rel, name), 0))
            if length > limit:
                long_ones.append((rel, name, first, length))
    for rel, name, first, length in long_ones:
        if (rel, name) not in allowed:
            problems.append(
                f"{rel}:{first}: {name} is {length} lines (limit {limit}); split it into named "
                f"steps (docs/STYLE.md) or, if it is a table, list '{rel}:{name}  # why' in "
                f"{ALLOW}")
    for (rel, name), number in sorted(allowed.items(), key=lambda kv: kv[1]):
        if (rel, name) not in seen:
            problems.append(f"{ALLOW}:{number}: {rel}:{name} names no function of "
                            f"{'/, '.join(FOLDERS)}/; remove the line or fix the name")
        elif seen[(rel, name)] <= limit:
            problems.append(f"{ALLOW}:{number}: {rel}:{name} is {seen[(rel, name)]} lines, "
                            f"within the limit of {limit}; remove the line")
    listed = sorted((length, rel, name) for rel, name, _f, length in long_ones
                    if (rel, name) in allowed)
    return problems, count, listed


def body(lines):
    return "".join(f"  x += {i};\n" for i in range(lines))


def said(tree, allow):
    """What the check says of `tree` with the allow-list `allow`."""
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, dict(tree, **{ALLOW: allow}))
        return "\n".join(check(tmp, LIMIT)[0])


def self_test():
    """Trees with long functions, listed or not, and things that are not functions."""
    long_fn = "static int phases(int a,\n                  int b) {\n  int x = 0;\n" + body(80) \
        + "  return x;\n}\n"
    tricky = ("/* int fake(void) { */\n#define BODY(x) { x; }\n"
              "static const char *s = \"}{\";\nstatic const int table[] = {\n"
              + "".join(f"  {i},\n" for i in range(100)) + "};\n"
              "typedef struct big {\n" + "".join(f"  int f{i};\n" for i in range(90)) + "} big;\n"
              "int short_one(void) { return '}'; }\n")
    cases = [
        ("a long function not on the list", {"src/base/a.c": long_fn}, "",
         ["src/base/a.c:2: phases is 84 lines (limit 80)"]),
        ("an allow-list line without a reason", {"src/base/a.c": long_fn},
         "src/base/a.c:phases\n", ["gives no reason"]),
        ("an allow-list line naming no function", {"tools/t.c": "int f(void) { return 0; }\n"},
         "tools/t.c:g  # a table\n", ["tools/t.c:g names no function"]),
        ("an allow-list line for a short function", {"tools/t.c": "int f(void) { return 0; }\n"},
         "tools/t.c:f  # a table\n", ["is 1 lines, within the limit"]),
    ]
    failed = check_common.failed_cases(cases, said)
    good = {"src/base/a.c": long_fn, "tools/x.c": tricky, ALLOW: "# tables\n"
            "src/base/a.c:phases  # a test table\n"}
    with tempfile.TemporaryDirectory() as tmp:
        check_common.write_tree(tmp, good)
        problems, count, _listed = check(tmp, LIMIT)
    if problems or count != 2:
        failed += 1
        print(f"self-test: a tree that keeps the rule was refused or misread ({count} functions "
              f"found, 2 expected): {problems}")
    return check_common.self_test_status(failed, len(cases) + 1)


def main(argv):
    status, args = check_common.take_front(argv[1:], __doc__, self_test)
    if status is not None:
        return status
    limit = LIMIT
    if len(args) >= 2 and args[0] == "--limit" and args[1].isdigit():
        limit = int(args[1])
        args = args[2:]
    usage = "usage: check-funclen.py [--self-test] [--limit N] [ROOT]"
    status, root = check_common.one_path(args, usage)
    if status is not None:
        return status
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not all(os.path.isdir(os.path.join(root, f)) for f in FOLDERS):
        print(f"check-funclen: {root} has no {' and '.join(FOLDERS)} folders", file=sys.stderr)
        return 2
    problems, count, listed = check(root, limit)
    for p in problems:
        print(p)
    if problems:
        print(f"check-funclen: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
              f"({count} functions in {', '.join(FOLDERS)})")
        return 1
    tables = ", ".join(f"{name} ({length})" for length, _rel, name in listed) or "none"
    print(f"check-funclen: {count} functions in {', '.join(FOLDERS)}, none over {limit} lines "
          f"but the tables of {ALLOW}: {tables}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
