#!/usr/bin/env bash
# Issue 10, items 6-7: `scaleup dump --json` and `scaleup stats` against tshark with the plugin
# and against a bare libpcap read loop; the plugin's own cost (tshark with the plugin against
# tshark reading the same frames as plain UDP data). Issue 17: the library's capture reader, what
# dump and stats read through, against the same libpcap loop. Medians of RUNS runs, wall time.
#
#   bench/tools.sh BUILD_DIR [FRAMES] [RUNS]     prints a table, writes BUILD_DIR/bench-tools.json
set -euo pipefail

BUILD=${1:?usage: tools.sh BUILD_DIR [FRAMES] [RUNS]}
FRAMES=${2:-1000000}
RUNS=${3:-3}
TOOL="$BUILD/tools/scaleup"
READ="$BUILD/bench/scaleup_bench_pcap_read"
PLUGINS="$BUILD/wireshark/plugins"

for f in "$TOOL" "$READ"; do
  [[ -x "$f" ]] || { echo "tools.sh: $f was not built" >&2; exit 1; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
cap="$scratch/bench.pcap"
# One encapsulation (udp4), so that item 7 can read the same frames as plain UDP data.
if ! "$TOOL" gen basic --encap udp4 --count "$FRAMES" -o "$cap" >/dev/null 2>"$scratch/stderr"; then
  cat "$scratch/stderr" >&2
  exit 1
fi
chmod 644 "$cap"
got=$("$READ" "$cap" | awk '{print $1}')

# Arithmetic on decimals (awk: bc prints ".5" for 0.5, which is not JSON).
calc() { awk "BEGIN { printf \"%.6g\", ($1) }"; }

# Median wall time (seconds) of a command, its output discarded. A command that fails stops the
# script with its error output: a failed run would otherwise be timed as a fast one.
median() {
  local ts=() i s e
  for ((i = 0; i < RUNS; i++)); do
    s=$(date +%s.%N)
    if ! "$@" >/dev/null 2>"$scratch/stderr"; then
      echo "tools.sh: failed: $*" >&2
      tail -n 20 "$scratch/stderr" >&2
      exit 1
    fi
    e=$(date +%s.%N)
    ts+=("$(calc "$e - $s")")
  done
  printf '%s\n' "${ts[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

t_read=$(median "$READ" "$cap")
t_reader=$(median "$READ" --reader "$cap")
t_dump=$(median "$TOOL" dump --json "$cap")
t_stats=$(median "$TOOL" stats --json "$cap")

t_tshark="" t_plain=""
if command -v tshark >/dev/null && [[ -d "$PLUGINS" ]]; then
  cp -r "$PLUGINS" "$scratch/plugins"
  chmod -R a+rX "$scratch/plugins"
  mkdir -p "$scratch/home"
  chmod 777 "$scratch/home"
  ts() {
    local cmd=(env HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config"
      WIRESHARK_PLUGIN_DIR="$scratch/plugins" tshark "$@")
    if ((EUID == 0)); then
      cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups "${cmd[@]}")
    fi
    "${cmd[@]}"
  }
  t_tshark=$(median ts -r "$cap" -T fields -e frame.number -e sue.rh.npsn)
  # The same frames as plain UDP data: the plugin's protocol disabled.
  t_plain=$(median ts -r "$cap" --disable-protocol sue -T fields -e frame.number -e data.len)
fi

rate() { calc "$got / $1 / 1000000"; }
row() { # figure value baseline baseline_name goal_ratio goal_text [lower_is_better] [unit]
  local ratio met
  ratio=$(calc "$2 / $3")
  met="-"
  if [[ -n "$5" ]]; then
    if [[ "${7:-}" == lower ]]; then
      met=$(calc "$ratio <= $5")
    else
      met=$(calc "$ratio >= $5")
    fi
    [[ "$met" == 1 ]] && met=yes || met=NO
  fi
  printf '%-42s %12.3f %-10s %12.3f %-18s %8.3f %-18s %s\n' "$1" "$2" "${8:-Mframes/s}" "$3" "$4" \
    "$ratio" "$6" "$met"
  json+=("{\"figure\": \"$1\", \"value\": $2, \"unit\": \"${8:-Mframes/s}\", \"baseline\": $3, \"baseline_is\": \"$4\", \"ratio\": $ratio, \"goal\": \"$6\", \"met\": \"$met\"}")
}

json=()
echo "capture: $got frames (scaleup gen basic --encap udp4 --count $FRAMES), medians of $RUNS runs"
if ((got < 500000)); then
  echo "note: at $got frames, process start-up (tshark's above all) weighs on every figure"
fi
printf '%-42s %12s %-10s %12s %-18s %8s %-18s %s\n' figure value unit baseline "baseline is" ratio \
  goal "met?"
r_read=$(rate "$t_read")
row "capture reader (dump's and stats' input)" "$(rate "$t_reader")" "$r_read" "libpcap read loop" 1 ">= libpcap"
if [[ -n "$t_tshark" ]]; then
  row "6. scaleup dump --json" "$(rate "$t_dump")" "$(rate "$t_tshark")" "tshark -T fields" 30 ">= 30 x tshark"
fi
row "6. scaleup dump --json (vs bare read)" "$(rate "$t_dump")" "$r_read" "libpcap read loop" "" "-"
row "6. scaleup stats --json" "$(rate "$t_stats")" "$r_read" "libpcap read loop" 0.5 ">= 0.5 x bare read"
if [[ -n "$t_tshark" ]]; then
  row "7. tshark with plugin (time)" "$t_tshark" "$t_plain" "tshark, plain UDP" 1.3 "<= 1.3 x plain" lower s
fi
out="$BUILD/bench-tools.json"
{
  echo "{\"frames\": $got, \"runs\": $RUNS, \"rows\": ["
  ((${#json[@]})) && printf '%s\n' "${json[@]}" | sed '$!s/$/,/'
  echo "]}"
} >"$out"
echo "wrote $out"
