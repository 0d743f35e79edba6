"""check_common.py -- what the checks of the tree share; imported by check-funclen.py,
check-layers.py, check-unique-names.py and check-issue-refs.py, not run: the front of their command lines
(-h/--help, --self-test), the C sources of a set of folders, an allow-list read line by line
(`ENTRY  # why`), and their self-tests' trees and cases."""
import os
import re
import sys


def take_front(args, doc, self_test):
    """-h/--help and --self-test at the front of args: (status, rest). status is the exit
    status to return at once (0 after the help, 1 when the self-test failed), else None."""
    if args and args[0] in ("-h", "--help"):
        print(doc)
        return 0, args
    if args and args[0] == "--self-test":
        if self_test() != 0:
            return 1, args
        args = args[1:]
    return None, args


def one_path(args, usage):
    """At most one argument left, not an option: (None, it or None); else the usage line on
    stderr and (2, None)."""
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(usage, file=sys.stderr)
        return 2, None
    return None, args[0] if args else None


def source_files(root, folders, extensions):
    """Every file of `folders` (below root) whose name ends with one of `extensions`, relative
    to root with '/', in a stable order."""
    for folder in folders:
        for here, dirs, names in os.walk(os.path.join(root, folder)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith(extensions):
                    yield os.path.relpath(os.path.join(here, name), root).replace(os.sep, "/")


def read_allow(path, label, pattern, not_entry, no_reason):
    """The allow-list at `path` (`label` in messages: its path in the repository), one
    `ENTRY  # why` a line: ({key: line number}, problems of the list itself); an entry's key is
    the tuple of `pattern`'s groups, or the entry itself when it has none. An entry `pattern`
    does not match fully is reported as "'ENTRY' is <not_entry>", one without a reason as
    "ENTRY gives no reason; say after '#' <no_reason>"."""
    allowed, problems = {}, []
    if not os.path.exists(path):
        return allowed, problems
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            entry, _, reason = text.partition("#")
            entry = entry.strip()
            if not entry:
                continue
            where = f"{label}:{number}"
            m = re.fullmatch(pattern, entry)
            if not m:
                problems.append(f"{where}: '{entry}' is {not_entry}")
                continue
            if not reason.strip():
                problems.append(f"{where}: {entry} gives no reason; say after '#' {no_reason}")
            allowed[m.groups() if m.re.groups else entry] = number
    return allowed, problems


def write_tree(root, files):
    """Writes {relative path: text} below root, making the folders."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def failed_cases(cases, text_of):
    """Runs self-test cases (WHAT, ARGS..., EXPECTED): text_of(*ARGS) is what the check said,
    which must hold every text of EXPECTED. Prints each case that does not; returns how many."""
    failed = 0
    for what, *args, expected in cases:
        text = text_of(*args)
        missing = [e for e in expected if e not in text]
        if missing:
            failed += 1
            print(f"self-test: {what} was not reported as expected (missing {missing}); "
                  f"the check said: {text or 'nothing'}")
    return failed


def self_test_status(failed, count):
    """The self-test's exit status after `failed` of `count` cases; says so when all behave."""
    if failed:
        return 1
    print(f"self-test: {count} cases behave")
    return 0


def repo_root(argv, doc, self_test, folders):
    """(ROOT, None) from `NAME [--self-test] [ROOT]`, or (None, the exit status): 0 after
    --help (doc printed), 1 when the self-test fails, 2 for a wrong command line or a ROOT
    without every one of `folders`. ROOT defaults to the folder above scripts/."""
    name = os.path.basename(argv[0])
    status, args = take_front(argv[1:], doc, self_test)
    if status is not None:
        return None, status
    status, root = one_path(args, f"usage: {name} [--self-test] [ROOT]")
    if status is not None:
        return None, status
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not all(os.path.isdir(os.path.join(root, f)) for f in folders):
        print(f"{os.path.splitext(name)[0]}: {root} has no {' and '.join(folders)} folders",
              file=sys.stderr)
        return None, 2
    return root, None
