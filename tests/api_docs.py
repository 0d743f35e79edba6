#!/usr/bin/env python3
"""api_docs -- every public declaration of include/cucore.h has a Doxygen comment.

    api_docs.py SOURCE_DIR WORK_DIR

1. Runs scripts/api-docs.sh (doxygen with docs/Doxyfile, warnings are errors) on the header;
   fails naming each undocumented declaration or broken comment doxygen reports.
2. Reads doxygen's XML and fails naming any declaration with an empty description: doxygen
   does not warn about undocumented enumerators or anonymous enums, this check does.
3. Proves it catches both: on a copy of the header without the comment of one function the
   run must fail naming that function, and on a copy without the comment of one enumerator
   the XML check must name that enumerator.

Needs doxygen (Debian's package; scripts/install-deps.sh installs it).
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

# What the self-checks remove: one function's comment block, one enumerator's trailing comment.
MUTANT_FUNCTION = "cucore_device_open"
MUTANT_ENUMERATOR = "CUCORE_STREAM_NON_BLOCKING"


def fail(msg):
    print(f"api_docs: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run_doxygen(src, header, out, xml=True):
    """Runs scripts/api-docs.sh; returns (exit status, warning lines)."""
    cmd = ["bash", os.path.join(src, "scripts", "api-docs.sh"), "--header", header, out]
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
    """Every struct, union, member and enumerator in doxygen's XML: {kind: count} and the
    list of those with no description."""
    counts, missing, seen = {}, [], set()
    for name in sorted(os.listdir(xml_dir)):
        if not name.endswith(".xml") or name in ("index.xml", "Doxyfile.xml"):
            continue
        root = ET.parse(os.path.join(xml_dir, name)).getroot()
        for cd in root.iter("compounddef"):
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
                        missing.append(f"{kind} {nm} (line {line})")
    return counts, missing


def mutate(src_header, dst_header, cut):
    with open(src_header, encoding="utf-8") as f:
        s = f.read()
    s2 = cut(s)
    if s2 is None:
        fail(f"self-check: could not alter the header (is {MUTANT_FUNCTION} / {MUTANT_ENUMERATOR} "
             "still declared with a comment?); update tests/api_docs.py")
    os.makedirs(os.path.dirname(dst_header), exist_ok=True)
    with open(dst_header, "w", encoding="utf-8") as f:
        f.write(s2)


def cut_function_comment(s):
    """The header without the comment block just before MUTANT_FUNCTION's declaration."""
    m = re.search(r"/\*\*(?:(?!\*/).)*\*/\s*\n(CUCORE_API [^;(]*\b" + MUTANT_FUNCTION + r"\()",
                  s, re.S)
    return s[:m.start()] + s[m.start(1):] if m else None


def cut_enumerator_comment(s):
    """The header without MUTANT_ENUMERATOR's trailing comment."""
    s2, n = re.subn(r"(\b" + MUTANT_ENUMERATOR + r"\b[^,\n/]*,?)[ \t]*/\*\*<.*?\*/", r"\1", s,
                    count=1, flags=re.S)
    return s2 if n == 1 else None


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    header = os.path.join(src, "include", "cucore.h")
    if shutil.which("doxygen") is None:
        fail("doxygen is not installed. Run scripts/install-deps.sh (it installs Debian's "
             "doxygen package; `make test` runs it first)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. doxygen on the real header: no warning at all.
    # 2. nothing without a description in its XML, enumerators included.
    out = os.path.join(work, "header")
    rc, warnings = run_doxygen(src, header, out)
    counts, missing = ({}, [])
    if os.path.isdir(os.path.join(out, "xml")):
        counts, missing = xml_check(os.path.join(out, "xml"))
    if rc != 0 or warnings or missing:
        report = explain(warnings)
        extra = [m for m in missing if m.split(" (")[0].split(" ")[-1] not in report]
        if extra:
            report += ("\n" if report else "") + "\n".join(f"  undocumented {m}" for m in extra)
        fail("include/cucore.h: every public declaration needs a Doxygen comment (see the note "
             "at the top of the header); doxygen and the XML check found:\n" + report)
    total = sum(counts.values())
    print(f"api_docs: {total} declarations documented: " +
          ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))

    # 3a. self-check: a function without its comment must fail, named.
    mut = os.path.join(work, "no_function_doc", "cucore.h")
    mutate(header, mut, cut_function_comment)
    rc, warnings = run_doxygen(src, mut, os.path.join(work, "no_function_doc", "out"), xml=False)
    if rc == 0 or not any(MUTANT_FUNCTION in w for w in warnings):
        fail(f"self-check: with the comment of {MUTANT_FUNCTION} removed the run passed (or did "
             f"not name it); exit status {rc}, warnings:\n" + explain(warnings))
    print(f"api_docs: self-check: a missing comment on {MUTANT_FUNCTION} fails the run")

    # 3b. self-check: an enumerator without its comment must be named by the XML check.
    mut = os.path.join(work, "no_enumerator_doc", "cucore.h")
    mutate(header, mut, cut_enumerator_comment)
    mout = os.path.join(work, "no_enumerator_doc", "out")
    run_doxygen(src, mut, mout)
    _, missing = xml_check(os.path.join(mout, "xml")) if os.path.isdir(os.path.join(mout, "xml")) \
        else ({}, [])
    if not any(MUTANT_ENUMERATOR in m for m in missing):
        fail(f"self-check: with the comment of {MUTANT_ENUMERATOR} removed the XML check did not "
             f"name it (it named: {missing})")
    print(f"api_docs: self-check: a missing comment on {MUTANT_ENUMERATOR} fails the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
