#!/usr/bin/env bash
# Loopback bulk goodput and CPU of polycc's controller through the s2n-quic adapter against
# s2n-quic's own CUBIC, runs alternated (builtin, polycc, builtin, ...) so that a noisy machine
# loads both alike; prints every run and the medians. BENCHMARKS.md records the figures.
#
#   scripts/quic-loopback-bench.sh [RUNS_PER_MODE] [SECONDS] [CCA]
#
# The receiver is the same in both modes (s2n's CUBIC: it sends only ACKs and the verdict); the
# sender's controller is what differs. CPU is the sender's user+sys (getrusage, over the
# transfer) and the receiver's (/usr/bin/time, whole process), each per GB delivered.
set -euo pipefail
runs=${1:-5}
secs=${2:-10}
cca=${3:-cubic}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/release/polycc-quic"
[ -x "$bin" ] || cargo build --release -p polycc-quic --manifest-path "$root/Cargo.toml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
for i in $(seq 1 "$runs"); do
  for mode in builtin polycc; do
    port=$((port + 1))
    # Fresh files each run: the client must not read the previous server's certificate.
    rm -f "$tmp/server.out" "$tmp/cert.pem"
    /usr/bin/time -f '%U %S' -o "$tmp/server.time" \
      "$bin" server --builtin-cubic --listen "127.0.0.1:$port" --cert-out "$tmp/cert.pem" \
      --transfers 1 --run-for $((secs + 60)) > "$tmp/server.out" &
    spid=$!
    for _ in $(seq 50); do [ -s "$tmp/server.out" ] && break; sleep 0.1; done
    if [ "$mode" = builtin ]; then sel=(--builtin-cubic); else sel=(--cca "$cca"); fi
    "$bin" client --connect "127.0.0.1:$port" --ca "$tmp/cert.pem" --duration "$secs" \
      "${sel[@]}" > "$tmp/client.out"
    wait "$spid"
    python3 - "$mode" "$tmp/client.out" "$tmp/server.time" >> "$tmp/rows" <<'EOF'
import json, sys
mode, client, server = sys.argv[1:]
c = json.loads(open(client).read().strip().splitlines()[-1])
su, ss = map(float, open(server).read().split()[-2:])
gb = c["bytes"] / 1e9
print(json.dumps({"mode": mode, "goodput_mbps": c["goodput_mbps"],
                  "sender_cpu_s_per_gb": c["cpu_s_per_gb"],
                  "receiver_cpu_s_per_gb": (su + ss) / gb, "bytes": c["bytes"]}))
EOF
    tail -1 "$tmp/rows"
  done
done
python3 - "$tmp/rows" "$cca" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("median over runs:")
for mode in ("builtin", "polycc"):
    r = [x for x in rows if x["mode"] == mode]
    med = lambda k: statistics.median(x[k] for x in r)
    name = "s2n cubic" if mode == "builtin" else f"polycc {sys.argv[2]}"
    print(f"  {name:>14}: goodput {med('goodput_mbps'):8.1f} Mbit/s, sender CPU "
          f"{med('sender_cpu_s_per_gb'):5.2f} s/GB, receiver CPU "
          f"{med('receiver_cpu_s_per_gb'):5.2f} s/GB  ({len(r)} runs)")
b = statistics.median(x["goodput_mbps"] for x in rows if x["mode"] == "builtin")
p = statistics.median(x["goodput_mbps"] for x in rows if x["mode"] == "polycc")
print(f"  ratio polycc / s2n goodput (medians): {p / b:.3f}")
pairs = [(rows[i]["goodput_mbps"], rows[i + 1]["goodput_mbps"]) for i in range(0, len(rows) - 1, 2)]
print("  per-pair ratios:", " ".join(f"{q / a:.3f}" for a, q in pairs))
EOF
