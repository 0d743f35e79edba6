#!/usr/bin/env bash
# Hostile text in binaries: names and strings read from a cubin, fatbin or
# PTX file never reach the terminal as raw control characters, and `--json` output is always
# valid UTF-8 JSON. Crafted names (ESC, BEL, CR, C1 controls, invalid and overlong UTF-8) and a
# bounded property fuzz (bit flips and truncations of real binaries at many offsets) through
# `cucore inspect`, `inspect --json` and `cucore run`. CUCORE_HOSTILE_LONG=1 tries every offset.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void kernel_name_placeholder_0123456789(float *x, int n) {
  if (threadIdx.x < n) x[threadIdx.x] = 1.0f; }
__device__ float table_placeholder_0123456789[4];
CU
"$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1
"$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/k.ptx" >/dev/null 2>&1
"$CUCORE" compile "$dir/k.cu" --arch sm_90 --target fatbin -o "$dir/k.fatbin" >/dev/null 2>&1
check "the binaries to damage were made" eval '[ -s "$dir/k.cubin" ] && [ -s "$dir/k.ptx" ] && [ -s "$dir/k.fatbin" ]'

python3 - "$CUCORE" "$dir" "${CUCORE_HOSTILE_LONG:-0}" <<'PY'
import json, os, random, subprocess, sys
cucore, d, long_mode = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
fails = 0
checked = 0

def fail(what):
    global fails
    fails += 1
    if fails <= 20:
        print("FAIL:", what)

def safe_text(b):
    """No byte below 0x20 but newline and tab, no DEL, valid UTF-8 without C1 controls."""
    if any((c < 0x20 and c not in (9, 10)) or c == 0x7f for c in b):
        return "a raw control character"
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError as e:
        return "bytes that are not UTF-8 (%s)" % e
    if any(0x80 <= ord(ch) <= 0x9f for ch in t):
        return "a C1 control character"
    return None

def run(args, what, want_json=False):
    global checked
    checked += 1
    p = subprocess.run([cucore] + args, capture_output=True, timeout=60)
    if p.returncode < 0 or p.returncode not in (0, 1, 2):
        fail("%s: exit %d (a crash?)" % (what, p.returncode))
        return None
    for name, stream in (("stdout", p.stdout), ("stderr", p.stderr)):
        bad = safe_text(stream)
        if bad:
            fail("%s: %s on %s: %r" % (what, bad, name, stream[:200]))
    if want_json and p.returncode == 0:
        try:
            return json.loads(p.stdout.decode("utf-8"))
        except Exception as e:
            fail("%s: --json output does not parse: %s" % (what, e))
    return p

def inspect_both(path, what):
    run(["inspect", path], what)
    return run(["inspect", path, "--json"], what + " --json", want_json=True)

cubin = open(os.path.join(d, "k.cubin"), "rb").read()
ptx = open(os.path.join(d, "k.ptx"), "rb").read()
fatbin = open(os.path.join(d, "k.fatbin"), "rb").read()

# 1. Crafted names: the kernel's and the variable's names replaced in place (same length).
kname = b"kernel_name_placeholder_0123456789"
vname = b"table_placeholder_0123456789"
hostile = {
    "ESC": b"\x1b[31mred\x1b]0;title\x07",
    "BEL and CR": b"\x07\rover",
    "raw 0x9b (CSI)": b"\x9b31m",
    "C1 as UTF-8": b"\xc2\x9b31m\xc2\x85",
    "invalid UTF-8": b"\xff\xfe\xc3(",
    "overlong and surrogate": b"\xc0\x80\xe0\x80\xaf\xed\xa0\x80",
    "cut-short sequence": b"ab\xe2\x82",
    "DEL": b"\x7f\x7f",
}
for label, text in hostile.items():
    for blob, name, suffix in ((cubin, kname, "cubin"), (ptx, kname, "ptx"), (cubin, vname, "cubin")):
        new = (text * 8)[: len(name)]
        new = new + b"x" * (len(name) - len(new))
        data = blob.replace(name, new)
        if data == blob:
            fail("%s: the name to replace is not in the %s" % (label, suffix))
            continue
        path = os.path.join(d, "hostile." + suffix)
        open(path, "wb").write(data)
        doc = inspect_both(path, "%s in a %s name (%s)" % (label, name[:6].decode(), suffix))
        if isinstance(doc, dict) and text.startswith((b"\xff", b"\xc0", b"ab")) and suffix == "cubin":
            if not doc.get("invalid_utf8_replaced"):
                fail("%s: --json does not say invalid UTF-8 was replaced" % label)
        # The name as the user would type it, in an argument error of `cucore run`.
        if name == kname and suffix == "cubin":
            run(["run", path, "--kernel", os.fsdecode(new), "--grid", "1", "--block", "32",
                 "--arg", "f32:1"], "%s: cucore run naming the kernel" % label)
            run(["run", path, "--kernel", "nosuch", "--grid", "1", "--block", "32"],
                "%s: cucore run listing the kernels" % label)

# 2. Property fuzz: bit flips and truncations at many offsets of each binary.
rng = random.Random(14)
for blob, suffix in ((cubin, "cubin"), (fatbin, "fatbin"), (ptx, "ptx")):
    n = len(blob)
    offsets = range(n) if long_mode else sorted(rng.sample(range(n), min(n, 60)))
    for off in offsets:
        data = bytearray(blob)
        data[off] ^= 1 << rng.randrange(8)
        path = os.path.join(d, "flip." + suffix)
        open(path, "wb").write(data)
        inspect_both(path, "%s with a bit flipped at byte %d" % (suffix, off))
    cuts = range(0, n, max(1, n // (n if long_mode else 15)))
    for cut in cuts:
        path = os.path.join(d, "cut." + suffix)
        open(path, "wb").write(blob[:cut])
        run(["inspect", path, "--json"], "%s cut to %d bytes --json" % (suffix, cut), want_json=True)
    # Random bytes scattered over the string-heavy part.
    for k in range(10 if not long_mode else 200):
        data = bytearray(blob)
        for _ in range(8):
            data[rng.randrange(n)] = rng.randrange(256)
        path = os.path.join(d, "noise." + suffix)
        open(path, "wb").write(data)
        inspect_both(path, "%s with random bytes, try %d" % (suffix, k))

print("hostile text: %d runs of cucore checked, %d failures" % (checked, fails))
sys.exit(1 if fails else 0)
PY
check "no raw control characters on the terminal, JSON always valid UTF-8" [ $? -eq 0 ]
finish
