#!/usr/bin/env bash
# Installs what the emulated testbed (crates/polycc-emu, `--backend emu`) needs from Debian:
# iproute2 (`ip netns`, `ip link`). Idempotent. Exits 0 without installing when it cannot
# (no apt-get, not root): the emulator then refuses to run with a message, and its tests skip
# unless POLYCC_REQUIRE_EMU=1.
set -euo pipefail
# shellcheck source=scripts/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

command -v ip >/dev/null && exit 0
apt_install "install-emu-deps.sh (--backend emu)" iproute2 || true
