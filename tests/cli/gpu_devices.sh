#!/usr/bin/env bash
# cucore devices on a GPU: memory pools and the default pool's state, in text and JSON, agree
# with each other and with the driver's rules (label gpu). The default pool's state is read only
# with --pools (it needs a context); without it the text has no pool line and the JSON a null.
# NVML's live state against the real NVML: the clocks, temperature, power and clock
# event (throttle) reasons lines, and the same facts in --json; skipped with a note only where
# NVML (libnvidia-ml.so.1) cannot be loaded.
source "$(dirname "$0")/lib.sh"
"$CUCORE" devices >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
run "$CUCORE" devices
check "devices ran" [ "$rc" -eq 0 ]
check "text without --pools: no default pool line" bash -c '! grep -q "default pool " <<<"$1"' _ "$out"
run "$CUCORE" devices --json
check "json without --pools: default_pool null where pools exist" python3 -c '
import json, sys
for dev in json.load(sys.stdin)["devices"]:
    assert dev.get("default_pool", "absent") is None or not dev["memory_pools"], dev
' <<<"$out"
run "$CUCORE" devices --pools
check "devices --pools ran" [ "$rc" -eq 0 ]
check "text: memory pools line" has "$out" "memory pools         yes"
check "text: default pool line" has "$out" "default pool         release threshold"
check "text: reserved and used with high-water marks" grep -qE \
  "reserved [0-9.]+ (bytes|MiB) \(high [0-9.]+ (bytes|MiB)\), used [0-9.]+ (bytes|MiB) \(high" <<<"$out"
check "text: managed and pageable access lines" bash -c \
  'grep -q "managed memory       " <<<"$1" && grep -q "pageable access      " <<<"$1"' _ "$out"
echo "$out" | grep -E "memory pools|default pool|managed memory|pageable access"
run "$CUCORE" devices --json --pools
check "devices --json --pools ran" [ "$rc" -eq 0 ]
check "json: pool fields of every device agree" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["devices"], d
for dev in d["devices"]:
    for key in ("memory_pools", "mempool_ipc_fd", "pageable_memory_access",
                "concurrent_managed_access"):
        assert isinstance(dev[key], bool), (key, dev)
    if not dev["memory_pools"]:
        assert "default_pool" not in dev, dev
        continue
    p = dev["default_pool"]
    assert p["readable"], p
    # A fresh process holds nothing in use; the reserve is at least what is used, the marks at
    # least the current values; the driver default threshold is 0 (the pool gives memory back).
    assert p["used_current"] == 0, p
    assert p["reserved_current"] >= p["used_current"], p
    assert p["reserved_high"] >= p["reserved_current"], p
    assert p["used_high"] >= p["used_current"], p
    assert p["release_threshold"] == 0, p
    print("device %d: pools %s, IPC %s, default pool %s" % (dev["ordinal"], dev["memory_pools"],
          dev["mempool_ipc_fd"], p))
' <<<"$out"

# NVML's live state: text lines and JSON fields (the same spellings as test_system_facts.sh
# checks on the fake NVML); values change from run to run, so their forms are checked.
run "$CUCORE" devices --json
check "devices --json ran (NVML)" [ "$rc" -eq 0 ]
nvml=$(nvml_state <<<"$out")
if [ "$nvml" = "absent" ]; then
  echo "note: NVML could not be loaded on this host; the live state is not checked"
else
  check "json: NVML answered for device 0 ($nvml)" [ "$nvml" = "yes" ]
  check "json: live state of every device" python3 -c '
import json, sys
for dev in json.load(sys.stdin)["devices"]:
    s = dev["system"]
    assert s["available"] is True, s
    assert isinstance(s["sm_clock_mhz"], int) and s["sm_clock_mhz"] > 0, s
    for key in ("sm_clock_max_mhz", "mem_clock_mhz", "mem_clock_max_mhz", "temperature_c",
                "power_mw", "power_limit_mw", "clock_reasons"):
        assert s[key] is None or (isinstance(s[key], int) and s[key] >= 0), (key, s)
    assert s["clock_reasons_text"] is None or isinstance(s["clock_reasons_text"], str), s
    assert (s["clock_reasons"] is None) == (s["clock_reasons_text"] is None), s
    assert isinstance(s["throttled"], bool), s
    print("device %d: SM %s MHz (max %s), %s C, %s mW of %s mW, reasons %s, throttled %s" % (
        dev["ordinal"], s["sm_clock_mhz"], s["sm_clock_max_mhz"], s["temperature_c"],
        s["power_mw"], s["power_limit_mw"], s["clock_reasons_text"], s["throttled"]))
' <<<"$out"
  run "$CUCORE" devices
  check "text: devices ran (NVML)" [ "$rc" -eq 0 ]
  check "text: no device without its live state" bash -c '! grep -q "live state " <<<"$1"' _ "$out"
  check "text: clocks line" grep -qE \
    "^  clocks now           SM [0-9]+ MHz \(max ([0-9]+ MHz|unknown)\), memory ([0-9]+ MHz|unknown) \(max ([0-9]+ MHz|unknown)\)$" <<<"$out"
  check "text: temperature line" grep -qE "^  temperature          ([0-9]+ C|unknown)$" <<<"$out"
  check "text: power line" grep -qE \
    "^  power                ([0-9]+\.[0-9] W|unknown) of a ([0-9]+\.[0-9] W|unknown) limit$" <<<"$out"
  check "text: clock event reasons line" grep -qE "^  clock event reasons  [^ ]" <<<"$out"
  echo "$out" | grep -E "clocks now|temperature|power  |clock event reasons"
fi
# --all-attributes: every attribute of cucore's table, each an integer or null with a reason,
# the properties' fields equal to their attributes.
run "$CUCORE" devices --all-attributes --json
check "devices --all-attributes --json ran" [ "$rc" -eq 0 ]
check "json: every attribute, an integer or a reason" python3 -c '
import json, sys
for dev in json.load(sys.stdin)["devices"]:
    a, why = dev["attributes"], dev.get("attribute_errors", {})
    assert len(a) == 148, len(a)
    for name, v in a.items():
        assert isinstance(v, int) or (v is None and why.get(name)), (name, v)
    assert a["multiprocessor_count"] == dev["sm_count"], dev
    assert a["warp_size"] == dev["warp_size"] == 32, dev
    assert a["max_threads_per_block"] == dev["max_threads_per_block"], dev
    print("device %d: %d attributes read, %d refused: %s" % (dev["ordinal"],
          sum(v is not None for v in a.values()), len(why), ", ".join(sorted(why))))
' <<<"$out"
# NVML's extras: the kernel-mode driver (and branch), each GPU's processes, and --topology's
# nearest CPUs and NUMA nodes and every pair's level and P2P (no pair on one GPU).
run "$CUCORE" devices --topology --json
check "devices --topology --json ran" [ "$rc" -eq 0 ]
check "json: kernel driver, processes, affinity, topology" python3 -c '
import json, sys
d = json.load(sys.stdin)
k = d["kernel_driver"]
if k["version"] is None:
    print("NVML not usable:", k["error"]); sys.exit(0)
assert k["version"][0].isdigit(), k
assert k["branch"] or "nvmlSystemGetDriverBranch" in k["branch_error"], k
n = len(d["devices"])
for dev in d["devices"]:
    assert isinstance(dev["processes"], list), dev.get("processes_error")
    assert dev["cpu_affinity"], dev["cpu_affinity"]
    print("device %d: %d processes, %d CPUs near, NUMA %s" % (dev["ordinal"],
          len(dev["processes"]), len(dev["cpu_affinity"]), dev["numa_affinity"]))
assert len(d["topology"]) == n * (n - 1) // 2, d["topology"]
levels = {"internal", "single", "multiple", "hostbridge", "node", "system"}
for t in d["topology"]:
    assert t["level"] in levels, t
    print("devices %d-%d: %s, P2P %s" % (t["a"], t["b"], t["level"], t["p2p"]))
print("kernel-mode driver", k["version"], "branch", k["branch"])
' <<<"$out"
run "$CUCORE" devices --topology
check "devices --topology ran" [ "$rc" -eq 0 ]
echo "$out" | grep -E "kernel-mode driver|processes  |nearest|device [0-9]+ - device"
finish
