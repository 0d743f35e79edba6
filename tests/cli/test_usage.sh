#!/usr/bin/env bash
# Usage errors exit 2 with a message on stderr; help exits 0.
source "$(dirname "$0")/lib.sh"

run "$CUCORE" frobnicate
check "unknown verb: exit 2" [ "$rc" -eq 2 ]
check "unknown verb: named" has "$err" "frobnicate"
run "$CUCORE" devices --bogus
check "unknown option: exit 2" [ "$rc" -eq 2 ]
check "unknown option: named" has "$err" "--bogus"
run "$CUCORE" --help
check "--help: exit 0" [ "$rc" -eq 0 ]
check "--help lists devices" has "$out" "devices"
run "$CUCORE" help devices
check "help VERB: usage line" has "$out" "usage: cucore devices"
run "$CUCORE" --version
check "--version" has "$out" "cucore "
run "$CUCORE"
check "no verb: exit 2 with the overview on stderr" [ "$rc" -eq 2 ]
finish
