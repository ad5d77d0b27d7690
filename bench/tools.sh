#!/usr/bin/env bash
# `scaleup dump` and `scaleup stats` against tshark with the plugin and against a bare libpcap read
# loop, on three captures: `gen basic --encap udp4`, a `gen
# session` capture and the same session as a header-only (snapshot length 80) Linux cooked
# capture. Per capture: `dump --json`, `dump` text and `dump -T fields` against tshark doing the
# same, `stats --json` against the bare read. On the basic capture also the library's capture
# reader against the libpcap loop and the plugin's own cost (tshark with the plugin
# against tshark reading the same frames as plain UDP data). Then the peak memory (resident set)
# of `dump --json` and `stats --json` on a session capture of 1x, 3x and 10x the frames
# (flat), and of `stats --json` on a capture of CONNECTIONS connections (bench/connections.py:
# each two PDUs and an ACK, its own UDP flow; then each a PDU and its ACK, the port named),
# whose share per connection is what docs/robustness.md ("Limits") states. Then hash flooding:
# `dump --json`, `stats --json`, `check` and tshark with the plugin on a capture whose sources
# were crafted to collide in the tables' old hash, against one of random sources. Last, `gen
# session` on 64 XPUs of 4 ports: frames per second of CPU. Medians of RUNS runs, wall time
# (the last, CPU time).
#
#   bench/tools.sh BUILD_DIR [FRAMES] [RUNS] [RSS_COMMANDS] [CONNECTIONS] [CRAFTED]
#     FRAMES: frames of each capture (about); RSS_COMMANDS: commands of the 1x session capture
#     of the memory rows (300000: 254 000 frames); CONNECTIONS: 1000000 by default; CRAFTED:
#     frames of the hash-flooding captures (100000).
#   Prints a table, writes BUILD_DIR/bench-tools.json.
set -euo pipefail

BUILD=${1:?usage: tools.sh BUILD_DIR [FRAMES] [RUNS] [RSS_COMMANDS]}
FRAMES=${2:-1000000}
RUNS=${3:-3}
RSS_COMMANDS=${4:-300000}
CONNECTIONS=${5:-1000000}
CRAFTED=${6:-100000}
TOOL="$BUILD/tools/scaleup"
READ="$BUILD/bench/scaleup_bench_pcap_read"
CRAFT="$BUILD/bench/scaleup_bench_crafted_capture"
PLUGINS="$BUILD/wireshark/plugins"
PYMOD="$BUILD/python/scaleup_ext"
compgen -G "$PYMOD/scaleup*.so" >/dev/null || PYMOD=""
HERE=$(cd "$(dirname "$0")" && pwd)

for f in "$TOOL" "$READ" "$CRAFT"; do
  [[ -x "$f" ]] || { echo "tools.sh: $f was not built" >&2; exit 1; }
done
for t in editcap python3; do
  command -v "$t" >/dev/null || { echo "tools.sh: $t is needed" >&2; exit 1; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"

# Arithmetic on decimals (awk: bc prints ".5" for 0.5, which is not JSON).
calc() { awk "BEGIN { printf \"%.6g\", ($1) }"; }

quiet() { # a command whose output is not wanted; its errors stop the script
  if ! "$@" >/dev/null 2>"$scratch/stderr"; then
    echo "tools.sh: failed: $*" >&2
    tail -n 20 "$scratch/stderr" >&2
    exit 1
  fi
}

# The captures. A session of C commands writes about 0.85 C frames (the harness's ACKs, NACKs
# and retransmissions included).
basic="$scratch/basic.pcap" session="$scratch/session.pcap" cooked="$scratch/cooked.pcap"
commands=$(awk "BEGIN { printf \"%d\", $FRAMES * 300000 / 254000 }")
quiet "$TOOL" gen basic --encap udp4 --count "$FRAMES" -o "$basic"
quiet "$TOOL" gen session --commands "$commands" --loss 0.001 -o "$session"
# `editcap -T linux-sll` relabels the link type and leaves the Ethernet header: linux_sll.py
# writes the cooked header; editcap then cuts every frame to 80 bytes.
quiet python3 "$HERE/linux_sll.py" "$session" "$scratch/sll.pcap"
quiet editcap -s 80 "$scratch/sll.pcap" "$cooked"
rm -f "$scratch/sll.pcap"
chmod 644 "$basic" "$session" "$cooked"
declare -A described=(
  [basic]="scaleup gen basic --encap udp4 --count $FRAMES"
  [session]="scaleup gen session --commands $commands --loss 0.001"
  [cooked]="the session, Linux cooked (SLL), editcap -s 80"
)

# One run's wall time (seconds) in `last`, the command's output discarded. A command that fails
# stops the script with its error output: a failed run would otherwise be timed as a fast one.
timed() {
  local s e
  s=$(date +%s.%N)
  quiet "$@"
  e=$(date +%s.%N)
  last=$(calc "$e - $s")
}
middle() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Median wall times of the commands held in the arrays named, timed in turn, a round of all of
# them a run; in the array `medians`, in the order named. A row's two sides then share the VM's
# spells, which move its speed by a quarter within minutes: timing all of one command's runs
# and then all of the other's set one spell against another.
interleaved() {
  local -a times=()
  local i k
  for ((i = 0; i < RUNS; i++)); do
    for ((k = 1; k <= $#; k++)); do
      local -n command=${!k}
      timed "${command[@]}"
      unset -n command
      times[k]+="$last "
    done
  done
  medians=()
  for ((k = 1; k <= $#; k++)); do
    # shellcheck disable=SC2086 # the times, split at their spaces
    medians+=("$(middle ${times[k]})")
  done
}

have_tshark=""
if command -v tshark >/dev/null && [[ -d "$PLUGINS" ]]; then
  have_tshark=1
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
else
  echo "note: no tshark or no plugin in $PLUGINS: the rows against tshark are left out"
fi

got=0
amdahl=()
rate() { calc "$got / $1 / 1000000"; }
json=()
row() { # capture figure value baseline baseline_name goal_ratio goal_text [lower] [unit]
  local ratio met
  ratio=$(calc "$3 / $4")
  met="-"
  if [[ -n "$6" ]]; then
    if [[ "${8:-}" == lower ]]; then
      met=$(calc "$ratio <= $6")
    else
      met=$(calc "$ratio >= $6")
    fi
    [[ "$met" == 1 ]] && met=yes || met=NO
  fi
  printf '%-8s %-38s %10.3f %-10s %10.3f %-20s %8.3f %-20s %s\n' "$1" "$2" "$3" "${9:-Mframes/s}" \
    "$4" "$5" "$ratio" "$7" "$met"
  json+=("{\"capture\": \"$1\", \"figure\": \"$2\", \"value\": $3, \"unit\": \"${9:-Mframes/s}\", \"baseline\": $4, \"baseline_is\": \"$5\", \"ratio\": $ratio, \"goal\": \"$7\", \"met\": \"$met\"}")
}
header() {
  printf '%-8s %-38s %10s %-10s %10s %-20s %8s %-20s %s\n' capture figure value unit baseline \
    "baseline is" ratio goal "met?"
}

echo "medians of $RUNS runs, wall time"
for name in basic session cooked; do
  echo "$name: $("$READ" "${!name}" | awk '{print $1}') frames (${described[$name]})"
done
header
fields=(-e frame.number -e sue.rh.npsn)
frames_json=""
# shellcheck disable=SC2034 # the c_* arrays are read by name (interleaved)
for name in basic session cooked; do
  cap=${!name}
  got=$("$READ" "$cap" | awk '{print $1}')
  frames_json+="\"$name\": $got, "
  c_read=("$READ" "$cap")
  c_json=("$TOOL" dump --json "$cap")
  c_text=("$TOOL" dump "$cap")
  c_fields=("$TOOL" dump -T fields "${fields[@]}" "$cap")
  c_stats=("$TOOL" stats --json "$cap")
  c_reader=("$READ" --reader "$cap")
  c_ts_fields=(ts -r "$cap" -T fields "${fields[@]}")
  c_ts_text=(ts -r "$cap")
  # The same frames as plain UDP data: the plugin's protocol disabled. On every capture: the
  # plugin judges the conformance rules, and basic's random PSNs break one almost every frame
  # (an expert item each), where a session breaks none.
  c_ts_plain=(ts -r "$cap" --disable-protocol sue -T fields -e frame.number -e data.len)
  timing=(c_read c_json c_text c_fields c_stats)
  [[ "$name" == basic ]] && timing+=(c_reader)
  [[ -n "$have_tshark" ]] && timing+=(c_ts_fields c_ts_text c_ts_plain)
  interleaved "${timing[@]}"
  t_read=${medians[0]} t_json=${medians[1]} t_text=${medians[2]} t_fields=${medians[3]}
  t_stats=${medians[4]}
  k=5
  if [[ "$name" == basic ]]; then
    t_reader=${medians[k]}
    k=$((k + 1))
  fi
  if [[ -n "$have_tshark" ]]; then
    t_ts_fields=${medians[k]} t_ts_text=${medians[k + 1]} t_plain=${medians[k + 2]}
  fi
  r_read=$(rate "$t_read")
  if [[ "$name" == basic ]]; then
    row "$name" "capture reader (dump's, stats' input)" "$(rate "$t_reader")" \
      "$r_read" "libpcap read loop" 1 ">= libpcap"
  fi
  if [[ -n "$have_tshark" ]]; then
    # The goals carry a margin over the lines the product needs (30 x, 0.5 x), so that one
    # run's noise does not move a figure across them.
    row "$name" "dump --json" "$(rate "$t_json")" "$(rate "$t_ts_fields")" "tshark -T fields" 33 \
      ">= 33 x tshark"
  fi
  row "$name" "dump --json (vs bare read)" "$(rate "$t_json")" "$r_read" "libpcap read loop" "" "-"
  row "$name" "stats --json" "$(rate "$t_stats")" "$r_read" "libpcap read loop" 0.55 \
    ">= 0.55 x bare read"
  # --threads: the rows above run on every core (the default); here one
  # thread against two, and from the speedup S on 2 cores the serial fraction f = 2/S - 1
  # (Amdahl), with what 16 and 64 cores would give: 1 / (f + (1 - f) / N).
  for cmd in "dump --json" "stats --json"; do
    read -ra args <<<"$cmd"
    c_t1=("$TOOL" "${args[@]}" --threads 1 "$cap")
    c_t2=("$TOOL" "${args[@]}" --threads 2 "$cap")
    interleaved c_t1 c_t2
    t1=${medians[0]} t2=${medians[1]}
    row "$name" "$cmd --threads 1" "$(rate "$t1")" "$r_read" "libpcap read loop" "" "-"
    row "$name" "$cmd --threads 2" "$(rate "$t2")" "$(rate "$t1")" "--threads 1" "" "-"
    f=$(calc "2 * $t2 / $t1 - 1")
    # Two threads twice as fast or more (within the runs' noise): no serial part is measurable,
    # and a negative fraction would project nonsense (a negative speedup on 64 cores).
    seen=""
    if [[ $(calc "$f < 0") == 1 ]]; then
      seen=" (measured $f: none measurable, taken as 0)"
      f=0
    fi
    amdahl+=("$name $cmd: speedup $(calc "$t1 / $t2") on 2, serial fraction $f$seen, 16 cores \
$(calc "1 / ($f + (1 - $f) / 16)") x, 64 cores $(calc "1 / ($f + (1 - $f) / 64)") x")
  done
  # The Python module (python/scaleup_ext), where it was built: columns() of the same fields
  # against dump -T fields. The call is timed in a Python that has imported numpy, as a pandas
  # session has (numpy's import alone is 0.3 s, most of dump's time on a bench capture).
  if [[ "$name" == session && -n "$PYMOD" ]]; then
    t_py=$(/usr/bin/python3 - "$PYMOD" "$cap" "$RUNS" <<'EOF'
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
import numpy.ma, scaleup  # noqa: E401,F401
ts = []
for _ in range(int(sys.argv[3])):
    s = time.perf_counter()
    scaleup.columns(sys.argv[2], ["frame.number", "sue.rh.npsn"])
    ts.append(time.perf_counter() - s)
print(statistics.median(ts))
EOF
)
    row "$name" "python scaleup.columns()" "$(rate "$t_py")" "$(rate "$t_fields")" \
      "dump -T fields" 0.5 ">= 0.5 x dump -T fields"
  fi
  if [[ -n "$have_tshark" ]]; then
    row "$name" "dump (text)" "$(rate "$t_text")" "$(rate "$t_ts_text")" "tshark (text)" "" "-"
    row "$name" "dump -T fields" "$(rate "$t_fields")" "$(rate "$t_ts_fields")" \
      "tshark -T fields" "" "-"
  else
    row "$name" "dump (text, vs bare read)" "$(rate "$t_text")" "$r_read" "libpcap read loop" "" "-"
    row "$name" "dump -T fields (vs bare read)" "$(rate "$t_fields")" "$r_read" \
      "libpcap read loop" "" "-"
  fi
  if [[ -n "$have_tshark" ]]; then
    row "$name" "tshark with plugin (time)" "$t_ts_fields" "$t_plain" "tshark, plain UDP" 1.3 \
      "<= 1.3 x plain" lower s
  fi
done
rm -f "$basic" "$cooked"
echo
echo "threads (Amdahl, from 1 and 2 threads on this machine's cores):"
printf '  %s\n' "${amdahl[@]}"

# Hash flooding: frames over UDP/IPv6, each a valid PDU from a source of its own (a flow and a
# connection each), the sources of one capture crafted so that the tables' old linear hash gave
# them all one value, of the other drawn at random (bench/crafted_capture.cpp). With keyed
# tables the crafted capture reads as fast as the random one. One thread, as the attack was
# measured.
quiet "$CRAFT" crafted "$CRAFTED" "$scratch/crafted.pcap"
quiet "$CRAFT" random "$CRAFTED" "$scratch/random.pcap"
chmod 644 "$scratch/crafted.pcap" "$scratch/random.pcap"
echo
echo "hash flooding: $CRAFTED PDUs over UDP/IPv6, a flow each; sources colliding in the old hash"
header
for cmd in "dump --json --threads 1" "stats --json --threads 1" "check"; do
  read -ra args <<<"$cmd"
  c_crafted=("$TOOL" "${args[@]}" "$scratch/crafted.pcap")
  c_random=("$TOOL" "${args[@]}" "$scratch/random.pcap")
  interleaved c_crafted c_random
  t_crafted=${medians[0]} t_random=${medians[1]}
  row crafted "$cmd (time)" "$t_crafted" "$t_random" "random sources" 3 "<= 3 x random" lower s
done
# shellcheck disable=SC2034 # read by name (interleaved)
if [[ -n "$have_tshark" ]]; then
  c_crafted=(ts -r "$scratch/crafted.pcap" -T fields "${fields[@]}")
  c_random=(ts -r "$scratch/random.pcap" -T fields "${fields[@]}")
  interleaved c_crafted c_random
  t_crafted=${medians[0]} t_random=${medians[1]}
  row crafted "tshark with plugin (time)" "$t_crafted" "$t_random" "random sources" 3 \
    "<= 3 x random" lower s
fi
rm -f "$scratch/crafted.pcap" "$scratch/random.pcap"

# Peak resident set of one run, in MB: GNU time's %M (KB; Debian package time).
peak_mb() {
  [[ -x /usr/bin/time ]] || { echo "tools.sh: /usr/bin/time is needed (package time)" >&2; exit 1; }
  quiet /usr/bin/time -f %M -o "$scratch/rss" "$@"
  calc "$(tail -n 1 "$scratch/rss") / 1024"
}

echo
echo "peak memory (resident set): a session of $RSS_COMMANDS, 3 x and 10 x as many commands"
header
for x in 1 3 10; do
  quiet "$TOOL" gen session --commands $((RSS_COMMANDS * x)) --loss 0.001 -o "$scratch/rss$x.pcap"
done
for cmd in "dump --json" "stats --json"; do
  read -ra args <<<"$cmd"
  base=""
  for x in 1 3 10; do
    got=$("$READ" "$scratch/rss$x.pcap" | awk '{print $1}')
    mb=$(peak_mb "$TOOL" "${args[@]}" "$scratch/rss$x.pcap")
    [[ -z "$base" ]] && base=$mb
    if ((x == 1)); then
      row "${x}x" "$cmd peak RSS ($got frames)" "$mb" "$mb" "itself" "" "-" "" MB
    else
      row "${x}x" "$cmd peak RSS ($got frames)" "$mb" "$base" "1x" 1.1 "<= 1.1 x 1x (flat)" lower MB
    fi
  done
done

# Bounded state: the peak with many connections open at once, each with PSNs in flight and an
# RTT, each its own UDP flow (so the flow table is counted too); and what a connection keeps once
# acknowledged, its port named (no UDP flow), against the 256 bytes a connection aimed at.
echo
echo "peak memory (resident set): $CONNECTIONS connections (bench/connections.py)"
header
# A connection's share: above the peak with 1 000 connections (the program, its buffers).
share() { calc "($1 - $2) * 1048576 / ($CONNECTIONS - 1000)"; }
quiet python3 "$HERE/connections.py" 1000 "$scratch/few.pcap"
quiet python3 "$HERE/connections.py" "$CONNECTIONS" "$scratch/connections.pcap"
few=$(peak_mb "$TOOL" stats --json "$scratch/few.pcap")
mb=$(peak_mb "$TOOL" stats --json "$scratch/connections.pcap")
row "conns" "stats --json peak RSS ($CONNECTIONS conns)" "$mb" 1024 "1 GiB" "" "-" "" MB
row "conns" "... a connection open, its UDP flow" "$(share "$mb" "$few")" \
  "$(share "$mb" "$few")" "itself" "" "-" "" bytes
quiet python3 "$HERE/connections.py" --acked 1000 "$scratch/few.pcap"
quiet python3 "$HERE/connections.py" --acked "$CONNECTIONS" "$scratch/connections.pcap"
few=$(peak_mb "$TOOL" stats --json --udp-port 47990 "$scratch/few.pcap")
mb=$(peak_mb "$TOOL" stats --json --udp-port 47990 "$scratch/connections.pcap")
row "conns" "... a connection acknowledged" "$(share "$mb" "$few")" 256 \
  "256 bytes" 1 "<= 256 bytes" lower bytes
rm -f "$scratch/connections.pcap" "$scratch/few.pcap"

# The fabric of SUE instances as a user runs it: `gen session`, the whole command with its pcap,
# frames written per second of CPU (user + system: GNU time), the median of RUNS runs.
echo
echo "gen session --xpus 64 --ports 4 --commands 200000: frames per second of CPU"
header
cpu_runs=()
for ((i = 0; i < RUNS; i++)); do
  quiet /usr/bin/time -f "%U %S" -o "$scratch/cpu" "$TOOL" gen session --xpus 64 --ports 4 \
    --commands 200000 -o "$scratch/fabric.pcap"
  cpu_runs+=("$(tail -n 1 "$scratch/cpu" | awk '{print $1 + $2}')")
done
cpu=$(printf '%s\n' "${cpu_runs[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
got=$("$READ" "$scratch/fabric.pcap" | awk '{print $1}')
row "fabric" "gen session 64 x 4, pcap included" "$(calc "$got / $cpu / 1000000")" 1 \
  "1 M frames/s" 1 ">= 1 M frames/s cpu" "" "Mfr/s cpu"
rm -f "$scratch/fabric.pcap"

# The same fabric in ns-3 (the sue module's sue-fabric: 64 XPUs x 4 ports on 4 switches, 3 125
# writes each, 1 % of frames lost on the way down) against the library's own simulator on the
# same fabric and load (gen session, its pcap included): frames simulated per second of CPU.
SUE_FABRIC="$BUILD/ns3/sue-fabric"
if [[ -x "$SUE_FABRIC" ]]; then
  echo
  echo "the 64 x 4 fabric, 200 000 writes, loss 0.01: frames simulated per second of CPU"
  header
  ns3_runs=() own_runs=()
  for ((i = 0; i < RUNS; i++)); do
    line=$("$SUE_FABRIC" --xpus=64 --ports=4 --commands=3125 --loss=0.01)
    frames=$(sed -n 's/.* frames \([0-9]*\) .*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.*cpu \([0-9.]*\) s.*/\1/p' <<<"$line")
    ns3_runs+=("$(calc "$frames / $cpu / 1000000")")
    quiet /usr/bin/time -f "%U %S" -o "$scratch/cpu" "$TOOL" gen session --xpus 64 --ports 4 \
      --commands 200000 --loss 0.01 --json -o "$scratch/fabric.pcap"
    got=$("$READ" "$scratch/fabric.pcap" | awk '{print $1}')
    own_runs+=("$(calc "$got / $(tail -n 1 "$scratch/cpu" | awk '{print $1 + $2}') / 1000000")")
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  row "fabric" "ns-3 sue module, 64 x 4, no pcap" "$(med "${ns3_runs[@]}")" \
    "$(med "${own_runs[@]}")" "gen session (+pcap)" "" "-" "" "Mfr/s cpu"
  rm -f "$scratch/fabric.pcap"
fi

out="$BUILD/bench-tools.json"
{
  echo "{\"frames\": {${frames_json%, }}, \"runs\": $RUNS, \"rows\": ["
  ((${#json[@]})) && printf '%s\n' "${json[@]}" | sed '$!s/$/,/'
  echo "]}"
} >"$out"
echo "wrote $out"
