#!/usr/bin/env python3
"""check-call-circles.py -- no circle of calls between the files of one folder.

Within a folder of src/ the files call each other in one direction: when two files need the
same helper it moves into a small file both call, and when a lower file needs something of a
higher one the call is turned around (ARCHITECTURE.md). Includes do not show who calls whom,
so this check reads the compiled objects (of any folder it is given): `nm` gives each object
the symbols it defines and the ones it uses; a call of a function defined by another object
of the same folder is an arrow between the two files (a use of data is not: the driver's table
`cc_drv` is read by the files it serves); a strongly connected component of two files or more
is a circle.
Each circle is printed with one loop through it and the symbol behind each arrow. With the
floors of scripts/check-layers.py it also refuses a use that runs up a floor (an object of
src/base/ calling a function defined in src/exec/, however it was declared).

Usage:  check-call-circles.py [--self-test] [--nm NM] [--cc CC] OBJECTS...
        OBJECTS: object files, folders searched for *.o, or ';'-separated lists of them (what
        CMake's $<TARGET_OBJECTS:...> gives). An object's file is named from its path: under
        CMake's 'CMakeFiles/TARGET.dir/' the rest of the path is the source file's
        ('src/memory/copy.c.o'), beside the target's own folder ('tools/CMakeFiles/
        cucore_cli.dir/json_write.c.o' is tools/json_write.c); elsewhere its last folder and name.
        --self-test compiles two small files that call each other (with CC, default cc) and
        proves the circle is reported, then checks OBJECTS.
Exit status: 0 when no folder has a circle and no call runs upward, 1 otherwise, 2 for a wrong
command line or an object nm cannot read.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
try:
    from importlib import import_module
    LAYERS = import_module("check-layers").LAYERS
except Exception:  # the floors are an extra; the circles are checked without them
    LAYERS = []
finally:
    sys.path.pop(0)

UNDEFINED = set("Uwv")
FUNCTION = set("TWi")  # text, weak text, indirect function; the rest defined is data


def source_name(path):
    """'src/memory/copy.c' for '.../CMakeFiles/cucore_objects.dir/src/memory/copy.c.o'."""
    path = path.replace(os.sep, "/")
    base = path[:-2] if path.endswith(".o") else path
    if "/CMakeFiles/" in "/" + base:
        before, _, after = ("/" + base).rpartition("/CMakeFiles/")
        rest = after.split("/", 1)[1] if "/" in after else after
        if "/" in rest:
            return rest
        return f"{os.path.basename(before) or '.'}/{rest}"
    parts = base.split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 else f"./{parts[-1]}"


def folder_of(name):
    return name.rsplit("/", 1)[0]


def floor_of(name):
    parts = name.split("/")
    if len(parts) == 3 and parts[0] == "src" and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return None


def object_files(args):
    found = []
    for arg in args:
        for item in arg.split(";"):
            if not item:
                continue
            if os.path.isdir(item):
                for root, dirs, names in os.walk(item):
                    dirs.sort()
                    found.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".o"))
            else:
                found.append(item)
    return found


def read_symbols(nm, objects):
    """{object: (defined {symbol: is a function}, used set)} from `nm -P -A`."""
    table = {o: ({}, set()) for o in objects}
    for start in range(0, len(objects), 200):
        chunk = objects[start:start + 200]
        run = subprocess.run([nm, "-P", "-A"] + chunk, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(run.stderr.strip() or f"{nm} failed on {chunk}")
        for line in run.stdout.splitlines():
            # 'path/to/x.c.o: symbol T 0000000000000000 0000000000000010'
            obj, sep, rest = line.partition(": ")
            fields = rest.split()
            if not sep or len(fields) < 2 or obj not in table:
                continue
            sym, kind = fields[0], fields[1]
            if kind in UNDEFINED:
                table[obj][1].add(sym)
            elif kind.isupper() or kind in "ui":
                table[obj][0][sym] = kind in FUNCTION
    return table


def build_graph(table):
    """Arrows 'file -> {file: function}' between objects of one folder (calls; a use of data,
    such as the driver's table cc_drv, is no arrow), and the uses that run up a floor."""
    names = {obj: source_name(obj) for obj in table}
    owner = {}
    for obj, (defined, _used) in table.items():
        for sym, is_function in defined.items():
            owner.setdefault(sym, (names[obj], is_function))
    graph, upward = {n: {} for n in names.values()}, []
    for obj, (_defined, used) in table.items():
        me = names[obj]
        for sym in sorted(used):
            other, is_function = owner.get(sym, (None, False))
            if other is None or other == me:
                continue
            if is_function and folder_of(other) == folder_of(me):
                graph[me].setdefault(other, sym)
            low, high = floor_of(me), floor_of(other)
            if low is not None and high is not None and high > low:
                upward.append((me, sym, other))
    return graph, upward


def components(graph):
    """Tarjan's strongly connected components (iterative), each of two nodes or more."""
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    result.append(sorted(comp))
    return sorted(result)


def one_loop(graph, comp):
    """The shortest loop from the component's first file back to it, inside the component."""
    start, members = comp[0], set(comp)
    previous, queue = {start: None}, [start]
    for node in queue:
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in members and nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return comp + [start]


def check(nm, objects):
    table = read_symbols(nm, objects)
    if not any(any(defined.values()) for defined, _used in table.values()):
        raise RuntimeError(f"no function defined in {len(objects)} objects: not objects nm "
                           f"can read (LTO bitcode?)")
    graph, upward = build_graph(table)
    problems = []
    for comp in components(graph):
        loop = one_loop(graph, comp)
        steps = " -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(loop, loop[1:]))
        problems.append(f"{folder_of(comp[0])}/: a circle of calls between {len(comp)} files "
                        f"({', '.join(os.path.basename(c) for c in comp)}): {steps} -> {loop[0]}; "
                        f"move the shared part into a file both call, or turn a call around")
    for me, sym, other in upward:
        problems.append(f"{me}: uses {sym} of {other}, a higher floor ({' < '.join(LAYERS)}); "
                        f"move it down or turn the call around")
    return problems, graph


def self_test(nm, cc):
    """Two files of one folder calling each other must be reported; a one-way pair must not."""
    sources = {
        "src/demo/ping.c": "int pong(int n);\nint ping(int n) { return n > 0 ? pong(n - 1) : 0; }\n",
        "src/demo/pong.c": "int ping(int n);\nint pong(int n) { return n > 0 ? ping(n - 1) : 1; }\n",
        "src/demo/leaf.c": "extern int seeds;\nint leaf(void) { return seeds; }\n",
        "src/demo/seeds.c": "int seeds = 7;\nint leaf(void);\nint grow(void) { return leaf(); }\n",
        "src/base/low.c": "int high(void);\nint low(void) { return high(); }\n",
        "src/exec/high.c": "int high(void) { return 1; }\n",
        "src/demo/user.c": "int leaf(void);\nint ping(int n);\n"
                           "int user(void) { return leaf() + ping(2); }\n",
        "src/other/far.c": "int user(void);\nint far(void) { return user(); }\n",
        "src/other/back.c": "int far(void);\nint leaf(void);\n"
                            "int back(void) { return far() + leaf(); }\n",
    }
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        objects = []
        for rel, text in sources.items():
            src = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(src), exist_ok=True)
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            obj = os.path.join(tmp, "build", "CMakeFiles", "demo.dir", rel + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            run = subprocess.run([cc, "-c", "-O0", src, "-o", obj], capture_output=True,
                                 text=True)
            if run.returncode != 0:
                print(f"self-test: {cc} could not compile {rel}: {run.stderr.strip()}")
                return 1
            objects.append(obj)
        problems, graph = check(nm, objects)
    text = "\n".join(problems)
    expected = ["src/demo/: a circle of calls between 2 files (ping.c, pong.c)",
                "src/demo/ping.c (pong) -> src/demo/pong.c (ping) -> src/demo/ping.c"]
    missing = [e for e in expected if e not in text]
    if missing:
        failed += 1
        print(f"self-test: the circle ping.c <-> pong.c was not reported as expected (missing "
              f"{missing}); the check said: {text or 'nothing'}")
    if LAYERS and not any(p.startswith("src/base/low.c: uses high of src/exec/high.c")
                          for p in problems):
        failed += 1
        print(f"self-test: the call from src/base/ up to src/exec/ was not reported: {problems}")
    if len(problems) != (2 if LAYERS else 1):
        failed += 1
        print(f"self-test: no other problem expected (src/other/ calls src/demo/ and back, but "
              f"across folders; user.c calls leaf.c one way; leaf.c only reads the data of "
              f"seeds.c, which calls it), the check said: {problems}")
    if "src/demo/leaf.c" not in graph.get("src/demo/user.c", {}):
        failed += 1
        print(f"self-test: the arrow user.c -> leaf.c was not read from the objects: {graph}")
    if failed:
        return 1
    print("self-test: a circle of two files and a call up a floor are reported; one-way calls, "
          "uses of data and calls between folders are not")
    return 0


def main(argv):
    args, nm, cc, selftest = argv[1:], "nm", os.environ.get("CC", "cc"), False
    while args and args[0].startswith("-"):
        if args[0] in ("-h", "--help"):
            print(__doc__)
            return 0
        if args[0] == "--self-test":
            selftest, args = True, args[1:]
        elif args[0] in ("--nm", "--cc") and len(args) > 1:
            if args[0] == "--nm":
                nm = args[1]
            else:
                cc = args[1]
            args = args[2:]
        else:
            print("usage: check-call-circles.py [--self-test] [--nm NM] [--cc CC] OBJECTS...",
                  file=sys.stderr)
            return 2
    if selftest and self_test(nm, cc) != 0:
        return 1
    objects = object_files(args)
    if not objects:
        if selftest and not args:
            return 0
        print(f"check-call-circles: no object files in {args}; build first (make build)",
              file=sys.stderr)
        return 2
    missing = [o for o in objects if not os.path.isfile(o)]
    if missing:
        print(f"check-call-circles: {len(missing)} object files are missing ({missing[0]}, ...); "
              f"build first (make build)", file=sys.stderr)
        return 2
    try:
        problems, graph = check(nm, objects)
    except (OSError, RuntimeError) as e:
        print(f"check-call-circles: {nm}: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    folders = sorted({folder_of(n) for n in graph})
    if problems:
        print(f"check-call-circles: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
              f"in {len(graph)} files of {len(folders)} folders")
        return 1
    arrows = sum(len(v) for v in graph.values())
    print(f"check-call-circles: {len(graph)} files in {len(folders)} folders "
          f"({', '.join(folders)}), {arrows} arrows between files of one folder: no circle"
          + (", no call runs up a floor" if LAYERS else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
