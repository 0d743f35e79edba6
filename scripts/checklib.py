"""checklib.py -- what the checks of scripts/ that read the whole repository share: their
command line, `NAME [--self-test] [ROOT]`, and the small trees their self-tests build.

Not run on its own; `import checklib` from a script in this folder.
"""
import os
import sys
import tempfile


def write_tree(root, files):
    """Writes {path relative to root: text} under root, making the folders."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path) or root, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def failed_cases(cases, check_text):
    """How many (what, tree, expected) cases the check got wrong, each printed: the tree
    ({path: text}) is written to a fresh folder and check_text(folder) must contain every
    string of expected."""
    failed = 0
    for what, tree, expected in cases:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, tree)
            text = check_text(tmp)
        missing = [e for e in expected if e not in text]
        if missing:
            failed += 1
            print(f"self-test: {what} was not reported as expected (missing {missing}); "
                  f"the check said: {text or 'nothing'}")
    return failed


def repo_root(argv, doc, self_test, folders):
    """(ROOT, None) from `NAME [--self-test] [ROOT]`, or (None, the exit status): 0 after
    --help (doc printed), 1 when the self-test fails, 2 for a wrong command line or a ROOT
    without every one of `folders`. ROOT defaults to the folder above scripts/; the self-test
    (a function returning 0 when its cases behave) runs first when asked for."""
    name = os.path.basename(argv[0])
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(doc)
        return None, 0
    if args and args[0] == "--self-test":
        if self_test() != 0:
            return None, 1
        args = args[1:]
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(f"usage: {name} [--self-test] [ROOT]", file=sys.stderr)
        return None, 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not all(os.path.isdir(os.path.join(root, f)) for f in folders):
        print(f"{os.path.splitext(name)[0]}: {root} has no {' and '.join(folders)} folders",
              file=sys.stderr)
        return None, 2
    return root, None
