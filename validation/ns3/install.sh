#!/usr/bin/env bash
# Installs ns-3 (Debian's libns3-dev) when absent and builds validation/ns3/build/dumbbell when its
# source is newer than the binary. Idempotent. Exits 0 without a binary when ns-3 cannot be
# installed (no apt-get, not root, no network), so callers (pytest, dev.sh) can skip.
#   validation/ns3/install.sh               install when absent, then build
#   validation/ns3/install.sh --build-only  never call apt-get; build only if ns-3 is present
set -euo pipefail
BUILD_ONLY=0
[[ ${1:-} == --build-only ]] && BUILD_ONLY=1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/dumbbell.cc
OUT=$HERE/build/dumbbell
LIBS=(-lns3-point-to-point -lns3-applications -lns3-internet -lns3-traffic-control
      -lns3-network -lns3-core)

say() { printf 'ns3/install.sh: %s\n' "$*" >&2; }
# shellcheck source=scripts/apt-install.sh
source "$HERE/../../scripts/apt-install.sh"

have_ns3() { [[ -f /usr/include/ns3/tcp-socket-base.h ]] && ls /usr/lib/*/libns3-internet.so >/dev/null 2>&1; }

if ! have_ns3 || ! command -v g++ >/dev/null; then
    if [[ $BUILD_ONLY == 1 ]]; then
        say "ns-3 (libns3-dev) or g++ not installed; run validation/ns3/install.sh to install them"
        exit 0
    fi
    pkgs=()
    have_ns3 || pkgs+=(libns3-dev)
    command -v g++ >/dev/null || pkgs+=(g++)
    if ! apt_install "ns3/install.sh (ns-3 validation)" "${pkgs[@]}"; then
        say "ns-3 validation will be skipped"
        exit 0
    fi
fi

if [[ -x $OUT && $OUT -nt $SRC && $OUT -nt ${BASH_SOURCE[0]} ]]; then
    exit 0
fi
mkdir -p "$HERE/build"
say "building $OUT"
# Debian's ns3 pkg-config files carry a broken -I flag, so the libraries are listed by hand;
# --no-as-needed keeps every module whose TypeIds are only looked up by name at run time.
g++ -std=c++17 -O2 -o "$OUT.tmp" "$SRC" -Wl,--no-as-needed "${LIBS[@]}"
mv -f "$OUT.tmp" "$OUT"
say "built $OUT"
