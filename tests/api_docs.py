#!/usr/bin/env python3
"""api_docs -- every public declaration of the public header has a Doxygen comment.

    api_docs.py SOURCE_DIR WORK_DIR

The public header is include/cucore.h and the parts it includes, include/cucore/*.h.
1. Runs scripts/api-docs.sh (doxygen with docs/Doxyfile, warnings are errors) on the header
   and every part; fails naming each undocumented declaration or broken comment doxygen
   reports.
2. Reads doxygen's XML and fails naming any declaration with an empty description: doxygen
   does not warn about undocumented enumerators or anonymous enums, this check does. Fails
   too when a part is missing from the XML (doxygen did not read it) or a part is not
   included by include/cucore.h.
3. Proves it catches both, in every part: on a copy of the include directory where each part
   lost the comment of its first documented function the run must fail naming each of those
   functions, and on a copy without the comment of one enumerator the XML check must name
   that enumerator.

Needs doxygen (Debian's package; scripts/install-deps.sh installs it).
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

# What the self-checks remove: in each part, the comment block of its first documented function
# (FUNCTION_DOC finds it); one enumerator's trailing comment.
MUTANT_ENUMERATOR = "CUCORE_STREAM_NON_BLOCKING"
FUNCTION_DOC = re.compile(r"/\*\*(?:(?!\*/).)*\*/\s*\n(CUCORE_API [^;(]*\b(cucore_\w+)\()", re.S)


def fail(msg):
    print(f"api_docs: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def parts_of(inc):
    """The parts of the header in include directory `inc`: names relative to it, sorted."""
    d = os.path.join(inc, "cucore")
    return sorted("cucore/" + n for n in os.listdir(d) if n.endswith(".h"))


def run_doxygen(src, inc, out, xml=True):
    """Runs scripts/api-docs.sh on include directory `inc`; returns (exit status, warnings)."""
    cmd = ["bash", os.path.join(src, "scripts", "api-docs.sh"), "--include", inc, out]
    if xml:
        cmd.insert(2, "--xml")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = os.path.join(out, "warnings.log")
    warnings = []
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            warnings = [line.rstrip("\n") for line in f if line.strip()]
    if p.returncode != 0 and not warnings:
        warnings = [line for line in p.stderr.splitlines() if line.strip()]
    return p.returncode, warnings


UNDOC = re.compile(r"^(?P<where>[^:]+:\d+): \w+: Member (?P<what>.+?) \((?P<kind>[\w ]+)\) "
                   r"of .* is not documented\.?$")


def explain(warnings):
    """Warning lines, with undocumented members named plainly."""
    lines = []
    for w in warnings:
        m = UNDOC.match(w)
        line = (f"  undocumented {m['kind']}: {m['what']}  ({os.path.basename(m['where'])})"
                if m else f"  {w}")
        if line not in lines:  # doxygen may say it twice (the group and the file)
            lines.append(line)
    return "\n".join(lines)


def text(e):
    return "".join(e.itertext()).strip() if e is not None else ""


def described(e):
    return bool(text(e.find("briefdescription")) or text(e.find("detaileddescription")))


def xml_check(xml_dir):
    """Every struct, union, member and enumerator in doxygen's XML: {kind: count}, the list
    of those with no description, and the files doxygen read (names as in the include
    directory)."""
    counts, missing, seen, files = {}, [], set(), set()
    for name in sorted(os.listdir(xml_dir)):
        if not name.endswith(".xml") or name in ("index.xml", "Doxyfile.xml"):
            continue
        root = ET.parse(os.path.join(xml_dir, name)).getroot()
        for cd in root.iter("compounddef"):
            if cd.get("kind") == "file":
                loc = cd.find("location")
                files.add(loc.get("file") if loc is not None else text(cd.find("compoundname")))
            if cd.get("kind") in ("struct", "union"):
                key = ("compound", text(cd.find("compoundname")))
                if key not in seen:
                    seen.add(key)
                    counts[cd.get("kind")] = counts.get(cd.get("kind"), 0) + 1
                    if not described(cd):
                        missing.append(f"{cd.get('kind')} {key[1]}")
            for md in cd.iter("memberdef"):
                items = [(md.get("kind"), md)] + [("enumvalue", ev) for ev in md.iter("enumvalue")]
                for kind, e in items:
                    if e.get("id") in seen:
                        continue
                    seen.add(e.get("id"))
                    counts[kind] = counts.get(kind, 0) + 1
                    if not described(e):
                        nm = text(e.find("name"))
                        if nm.startswith("@"):
                            nm = "(anonymous)"
                        loc = e.find("location") if e.find("location") is not None else md.find("location")
                        line = loc.get("line") if loc is not None else "?"
                        where = loc.get("file") if loc is not None else "?"
                        missing.append(f"{kind} {nm} ({where}, line {line})")
    return counts, missing, files


def copy_include(src_inc, dst_inc):
    shutil.rmtree(dst_inc, ignore_errors=True)
    shutil.copytree(src_inc, dst_inc)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, s):
    with open(path, "w", encoding="utf-8") as f:
        f.write(s)


def cut_function_comments(inc):
    """In each part of include directory `inc`, removes the comment block of the first
    documented function; returns {part: function}."""
    cut = {}
    for part in parts_of(inc):
        path = os.path.join(inc, part)
        s = read(path)
        m = FUNCTION_DOC.search(s)
        if m is None:
            fail(f"self-check: {part} has no documented function (CUCORE_API ... cucore_name( "
                 "after a comment block) to remove the comment of; update tests/api_docs.py")
        write(path, s[:m.start()] + s[m.start(1):])
        cut[part] = m.group(2)
    return cut


def cut_enumerator_comment(inc):
    """Removes MUTANT_ENUMERATOR's trailing comment in the part that declares it."""
    for part in parts_of(inc):
        path = os.path.join(inc, part)
        s2, n = re.subn(r"(\b" + MUTANT_ENUMERATOR + r"\b[^,\n/]*,?)[ \t]*/\*\*<.*?\*/", r"\1",
                        read(path), count=1, flags=re.S)
        if n == 1:
            write(path, s2)
            return
    fail(f"self-check: could not remove the comment of {MUTANT_ENUMERATOR} (is it still declared "
         "with a comment?); update tests/api_docs.py")


def umbrella_includes(inc):
    """The parts include/cucore.h includes, in its order."""
    return re.findall(r'^\s*#\s*include\s*"(cucore/\w+\.h)"', read(os.path.join(inc, "cucore.h")),
                      re.M)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    inc = os.path.join(src, "include")
    parts = parts_of(inc)
    if shutil.which("doxygen") is None:
        fail("doxygen is not installed. Run scripts/install-deps.sh (it installs Debian's "
             "doxygen package; `make test` runs it first)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 0. every part is included by the umbrella, once.
    included = umbrella_includes(inc)
    if sorted(included) != parts or len(set(included)) != len(included):
        fail(f"include/cucore.h includes {included}, but include/cucore/ holds {parts}: the "
             "umbrella must include every part once")

    # 1. doxygen on the real header and its parts: no warning at all.
    # 2. nothing without a description in its XML, enumerators included; every part read.
    out = os.path.join(work, "header")
    rc, warnings = run_doxygen(src, inc, out)
    counts, missing, files = ({}, [], set())
    if os.path.isdir(os.path.join(out, "xml")):
        counts, missing, files = xml_check(os.path.join(out, "xml"))
    if rc != 0 or warnings or missing:
        report = explain(warnings)
        extra = [m for m in missing if m.split(" (")[0].split(" ")[-1] not in report]
        if extra:
            report += ("\n" if report else "") + "\n".join(f"  undocumented {m}" for m in extra)
        fail("include/cucore.h and its parts: every public declaration needs a Doxygen comment "
             "(see the note at the top of include/cucore.h); doxygen and the XML check found:\n" +
             report)
    unread = [f for f in ["cucore.h"] + parts if f not in files]
    if unread:
        fail(f"doxygen did not read {', '.join(unread)} (it read {sorted(files)}): check INPUT "
             "in docs/Doxyfile and scripts/api-docs.sh")
    total = sum(counts.values())
    print(f"api_docs: {total} declarations documented in cucore.h and {len(parts)} parts: " +
          ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))

    # 3a. self-check: in every part, a function without its comment must fail, named.
    mut = os.path.join(work, "no_function_doc", "include")
    copy_include(inc, mut)
    cut = cut_function_comments(mut)
    rc, warnings = run_doxygen(src, mut, os.path.join(work, "no_function_doc", "out"), xml=False)
    unnamed = [f"{fn} ({part})" for part, fn in cut.items() if not any(fn in w for w in warnings)]
    if rc == 0 or unnamed:
        fail(f"self-check: with the comments of {', '.join(unnamed) or 'one function per part'} "
             f"removed the run passed or did not name them; exit status {rc}, warnings:\n" +
             explain(warnings))
    print("api_docs: self-check: a missing comment fails the run in every part (" +
          ", ".join(f"{fn} in {part}" for part, fn in cut.items()) + ")")

    # 3b. self-check: an enumerator without its comment must be named by the XML check.
    mut = os.path.join(work, "no_enumerator_doc", "include")
    copy_include(inc, mut)
    cut_enumerator_comment(mut)
    mout = os.path.join(work, "no_enumerator_doc", "out")
    run_doxygen(src, mut, mout)
    _, missing, _ = xml_check(os.path.join(mout, "xml")) \
        if os.path.isdir(os.path.join(mout, "xml")) else ({}, [], set())
    if not any(MUTANT_ENUMERATOR in m for m in missing):
        fail(f"self-check: with the comment of {MUTANT_ENUMERATOR} removed the XML check did not "
             f"name it (it named: {missing})")
    print(f"api_docs: self-check: a missing comment on {MUTANT_ENUMERATOR} fails the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
