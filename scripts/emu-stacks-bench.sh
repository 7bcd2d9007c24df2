#!/usr/bin/env bash
# One bulk flow of polycc's `cubic` over real QUIC (stack = "quic"), the kernel's CUBIC
# (stack = "linux") and polycc's own sender over UDP (stack = "udp"), each alone on the same
# emulated link (default 50 Mbit/s, 20 ms, one-BDP drop-tail buffer, 10 s), runs alternated so
# that a noisy machine loads all alike. Prints every run (goodput, mean and p95 RTT, the
# process's CPU seconds: emulator thread and both endpoints) and the medians. As root.
# BENCHMARKS.md records the figures.
#
#   scripts/emu-stacks-bench.sh [RUNS_PER_STACK] [RATE] [RTT] [SECONDS]
set -euo pipefail
runs=${1:-3}
rate=${2:-50Mbps}
rtt=${3:-20ms}
secs=${4:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/release/polycc-emu-run"
[ -x "$bin" ] || cargo build --release -p polycc-emu --bin polycc-emu-run --manifest-path "$root/Cargo.toml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$runs"); do
  for stack in quic linux udp; do
    cat > "$tmp/s.toml" <<EOF
name = "stacks-$stack"
duration = "${secs}s"
[[links]]
id = "bottleneck"
rate = "$rate"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "f"
cca = "cubic"
stack = "$stack"
rtt = "$rtt"
EOF
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$bin" "$tmp/s.toml" > "$tmp/out.json"
    python3 - "$stack" "$tmp/out.json" "$tmp/time" >> "$tmp/rows" <<'EOF'
import json, sys
stack, out, t = sys.argv[1:]
f = json.load(open(out))["flows"][0]
u, s = map(float, open(t).read().split()[-2:])
print(stack, f["goodput_mbps"], f["rtt_ms"]["mean"], f["rtt_ms"]["p95"], u + s, f["retransmits"])
EOF
    tail -1 "$tmp/rows"
  done
done
python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("stack  goodput_mbps  rtt_mean_ms  rtt_p95_ms  cpu_s  retransmits  (medians)")
for stack in ("quic", "linux", "udp"):
    r = [list(map(float, x[1:])) for x in rows if x[0] == stack]
    m = [statistics.median(c) for c in zip(*r)]
    print(f"{stack:6} {m[0]:12.2f} {m[1]:12.1f} {m[2]:11.1f} {m[3]:6.2f} {m[4]:12.0f}")
EOF
