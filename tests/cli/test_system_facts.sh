#!/usr/bin/env bash
# NVML's facts in the command, with the project's fake driver and fake NVML:
# `cucore devices` shows clocks, temperature, power and clock-event reasons and `--json`
# carries them; without NVML it says why and still lists the device; `cucore run` records the
# SM clock around its timing and warns when the GPU was throttled (JSON: sm_clock_mhz,
# clock_reasons, throttled; null without NVML); `--all-attributes` lists every device attribute.
source "$(dirname "$0")/lib.sh"

libdir="$(dirname "$CUCORE")/../lib"
fake="$libdir/libcucore_fake_driver.so"
nvml="$libdir/libcucore_fake_nvml.so"
[ -f "$fake" ] && [ -f "$nvml" ] || { echo "skipped: no fake driver or NVML in $libdir"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" CUCORE_FAKE_NVML_REASONS=0x44 \
  timeout 20 "$CUCORE" devices
check "devices: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "devices: clocks" has "$out" "clocks now           SM 1755 MHz (max 1980 MHz), memory 2619 MHz (max 2619 MHz)"
check "devices: temperature" has "$out" "temperature          41 C"
check "devices: power" has "$out" "power                123.5 W of a 700.0 W limit"
check "devices: reasons, flagged" has "$out" "clock event reasons  sw_power_cap, hw_thermal (throttled"
check "devices: NVLink" has "$out" "NVLink               17 of 18 links active"

run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" devices --json
check "devices --json: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
facts=$(python3 -c 'import json,sys; s=json.load(sys.stdin)["devices"][0]["system"]; print(s["available"], s["sm_clock_mhz"], s["sm_clock_max_mhz"], s["temperature_c"], s["power_mw"], s["power_limit_mw"], s["clock_reasons_text"], s["throttled"], s["mig_current"])' <<<"$out")
check "devices --json: the facts ($facts)" [ "$facts" = "True 1755 1980 41 123456 700000 gpu_idle False None" ]

run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$dir/none.so" timeout 20 "$CUCORE" devices
check "devices without NVML: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "devices without NVML: the device is listed" has "$out" "device 0: cucore fake H100"
check "devices without NVML: says why" has "$out" "live state           unknown: NVML (\`$dir/none.so\`) could not be loaded"
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$dir/none.so" timeout 20 "$CUCORE" devices --json
avail=$(python3 -c 'import json,sys; s=json.load(sys.stdin)["devices"][0]["system"]; print(s["available"], "CUCORE_LIBNVML" in s["error"])' <<<"$out")
check "devices --json without NVML: available false, error given ($avail)" [ "$avail" = "False True" ]

# --all-attributes: every attribute of the library's table, name = value; 13.1's id refused by
# the 13.0 fake with the versions named; the JSON carries the same (null and a reason for it).
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" devices --all-attributes
check "devices --all-attributes: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "--all-attributes: heading" has "$out" "  all attributes (cucore_device_get_attribute):"
check "--all-attributes: a value" has "$out" "    multiprocessor_count = 132"
check "--all-attributes: a deprecated one" has "$out" "    gpu_overlap = 0 (deprecated)"
check "--all-attributes: newer than the driver" has "$out" \
  "    atomic_reduction_supported: not read: cucore_device_get_attribute: atomic_reduction_supported (CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED, id 148) came with CUDA 13.1; the loaded driver is version 13.0"
n=$(grep -cE "^    [a-z0-9_]+( = -?[0-9]+|: not read)" <<<"$out")
check "--all-attributes: 148 lines ($n)" [ "$n" = 148 ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" devices --all-attributes --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin)["devices"][0]; a=d["attributes"]; print(len(a), a["multiprocessor_count"] == d["sm_count"], a["warp_size"], a["atomic_reduction_supported"], "13.1" in d["attribute_errors"]["atomic_reduction_supported"])' <<<"$out")
check "devices --all-attributes --json ($j)" [ "$j" = "148 True 32 None True" ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" devices --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin)["devices"][0]; print("attributes" in d)' <<<"$out")
check "devices --json without --all-attributes: no attributes ($j)" [ "$j" = "False" ]

printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n' >"$dir/k.ptx"
kargs=(run "$dir/k.ptx" --kernel k --grid 1 --block 32 --arg 'buf:f32[32]=0' --arg i32:32 --repeat 3)
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" CUCORE_FAKE_NVML_REASONS=0x24 \
  timeout 20 "$CUCORE" "${kargs[@]}"
check "run: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "run: the SM clock is recorded" has "$out" "SM clock: 1755 MHz (max 1980) around the timing; clock event reasons: sw_power_cap, sw_thermal"
check "run: a throttled timing is flagged" has "$out" "warning: the GPU was throttled during the timing (sw_power_cap, sw_thermal)"
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" "${kargs[@]}"
check "run, not throttled: no warning" bash -c '! grep -q "throttled" <<<"$1"' _ "$out"
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" CUCORE_FAKE_NVML_REASONS=0x8 \
  timeout 20 "$CUCORE" "${kargs[@]}" --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sm_clock_mhz"], d["clock_reasons"], d["throttled"])' <<<"$out")
check "run --json: clock and throttle recorded ($j)" [ "$j" = "1755 hw_slowdown True" ]
# A run of one launch (no --repeat, --warmup or --graph) reads no clock and loads no NVML.
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" "${kargs[@]:0:12}" --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sm_clock_mhz"], "load_nvml" in d["phases"])' <<<"$out")
check "run of one launch: no SM clock, NVML not loaded (rc $rc, $j)" [ "$rc" -eq 0 -a "$j" = "None False" ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" timeout 20 "$CUCORE" "${kargs[@]}" --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print("load_nvml" in d["phases"])' <<<"$out")
check "run with --repeat 3: NVML loaded ($j)" [ "$j" = "True" ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$dir/none.so" timeout 20 "$CUCORE" "${kargs[@]}" --json
j=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sm_clock_mhz"], d["clock_reasons"], d["throttled"])' <<<"$out")
check "run --json without NVML: nulls, and the run still works (rc $rc, $j)" [ "$rc" -eq 0 -a "$j" = "None None None" ]
# The kernel-mode driver, the processes, and --topology (two fake GPUs): text and JSON; without
# NVML nothing more than the one line that says why.
two=(env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml" CUCORE_FAKE_DEVICES=2 CUCORE_FAKE_NVML_GPUS=2 CUCORE_FAKE_NVML_PROCS=3)
run "${two[@]}" timeout 20 "$CUCORE" devices --topology
check "devices --topology: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "devices: kernel-mode driver and branch" has "$out" "kernel-mode driver 580.95.05 (branch r580_00)"
check "devices: processes, merged, named" grep -qE "^  processes            4: [0-9]+ cucore \(512.0 MiB, compute\+graphics\), 4194399 \? \(1.0 MiB, graphics\), 4194401 \? \(compute\)" <<<"$out"
check "devices: no process on the second GPU" has "$out" "  processes            0"
check "devices --topology: nearest CPUs" has "$out" "  nearest CPUs         0-1,1023,1100"
check "devices --topology: nearest NUMA nodes" has "$out" "  nearest NUMA nodes   1,63,70"
check "devices --topology: the pair" has "$out" "  device 0 - device 1  multiple; P2P read ok, write ok, NVLink ok, atomics gpu_not_supported, PCIe unknown"
run "${two[@]}" timeout 20 "$CUCORE" devices --topology --json
j=$(python3 -c '
import json,sys
d=json.load(sys.stdin); k=d["kernel_driver"]; t=d["topology"][0]; p=d["devices"][0]["processes"][0]
print(k["version"], k["branch"], t["level"], t["p2p"]["atomics"], t["p2p"]["pci"], p["name"], p["compute"], p["graphics"], p["used_memory"], d["devices"][1]["cpu_affinity"], d["devices"][1]["numa_affinity"])' <<<"$out")
check "devices --topology --json ($j)" [ "$j" = "580.95.05 r580_00 multiple gpu_not_supported unknown cucore True True 536870912 [0, 1, 1023, 1100] [1, 63, 70]" ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$libdir/libcucore_fake_nvml_old.so" timeout 20 "$CUCORE" devices --json
j=$(python3 -c 'import json,sys; k=json.load(sys.stdin)["kernel_driver"]; print(k["version"], k["branch"], "nvmlSystemGetDriverBranch" in k["branch_error"])' <<<"$out")
check "devices --json, an NVML without the branch: named ($j)" [ "$j" = "580.95.05 None True" ]
run env CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$dir/none.so" timeout 20 "$CUCORE" devices --topology
check "devices --topology without NVML: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "devices --topology without NVML: no process or affinity lines" bash -c '! grep -qE "processes  |nearest CPUs|kernel-mode" <<<"$1"' _ "$out"
check "devices --topology without NVML: the topology says why" has "$(grep -A1 "^topology (NVML):" <<<"$out")" "  unknown: NVML (\`$dir/none.so\`) could not be loaded"
finish
