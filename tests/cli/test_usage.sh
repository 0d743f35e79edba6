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
run "$CUCORE" devices --jsn
check "misspelt option: exit 2 with the nearest" has "$err" "did you mean \`--json\`?"
run "$CUCORE" version --json=1
check "a flag refuses a value: exit 2" [ "$rc" -eq 2 ]

# The README's table of verbs lists each verb's options as its table has them: every option
# named in a verb's row is in `cucore help VERB`.
readme="$(dirname "$0")/../../README.md"
for verb in devices version compile inspect occupancy run cache; do
  row=$(grep -E "^\| \`cucore $verb[ \`]" "$readme")
  check "README: a row for $verb" [ -n "$row" ]
  help=$("$CUCORE" help "$verb")
  for flag in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(cut -d'|' -f4- <<<"$row")"); do
    check "README: $verb $flag is in \`cucore help $verb\`" has "$help" "$flag"
  done
done
finish
