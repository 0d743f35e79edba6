#!/usr/bin/env python3
"""Every environment variable the sources read (getenv("NAME") in src/ and tools/, and the
overrides named in the toolkit loader's table) has a row in README.md's "Environment variables"
table, and every row names a variable the sources read. Prints what is missing; exit 1 then."""
import pathlib, re, sys

top = pathlib.Path(__file__).resolve().parent.parent
read = set()
for f in list((top / "src").rglob("*.c")) + list((top / "tools").glob("*.c")):
    text = f.read_text(errors="replace")
    read |= set(re.findall(r'getenv\("([A-Z0-9_]+)"\)', text))
loader = (top / "src/loader/toolkit.c").read_text(errors="replace")
read |= set(re.findall(r'"(CUCORE_[A-Z0-9_]+)",\s+\w+_dirs', loader)) # {name, ENV, dirs, ...}
readme = (top / "README.md").read_text()
section = readme.split("## Environment variables", 1)
if len(section) < 2:
    sys.exit("env_docs: README.md has no \"## Environment variables\" section")
table = section[1].split("\n## ", 1)[0]
documented = set()
for row in table.splitlines():
    if row.startswith("| `"):
        documented |= set(re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1]))
missing = sorted(read - documented)
stale = sorted(documented - read)
for v in missing:
    print(f"env_docs: {v} is read by the sources but has no row in README.md's table")
for v in stale:
    print(f"env_docs: README.md's table names {v}, which no source reads")
if not read:
    sys.exit("env_docs: found no getenv call: the pattern is wrong")
print(f"env_docs: {len(read)} variables read, all documented" if not missing and not stale else "")
sys.exit(1 if missing or stale else 0)
