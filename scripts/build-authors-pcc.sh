#!/usr/bin/env bash
# Builds the PCC authors' own implementations, to run beside polycc's controllers in the
# emulated testbed as outside programs (`stack = "external"`; VALIDATION.md, "Against the
# authors' code", python -m polycc.reproduce.authors_pcc):
#
#   allegro  github.com/modong/pcc (NSDI'15 PCC Allegro, a UDT fork): sender/app/appclient,
#            receiver/app/appserver
#   vivace   github.com/PCCproject/PCC-Uspace (master: Vivace, NSDI'18, in the Proteus code):
#            src/app/pccclient, src/app/pccserver
#
# Their code is read from git snapshots (AUTHORS_PCC_MIRROR, default /work/.mirror, holding
# modong+pcc/repo and PCCproject+PCC-Uspace/repo) or cloned from GitHub when none is there,
# and built under AUTHORS_PCC_DIR (default ~/.cache/polycc/authors), never inside this
# repository. The changes made to it are the few needed to build and to run it as the paper
# describes, each applied below by sed with its reason:
#
#   allegro: the NSDI'15 utility function. Its README says the code as published runs "a
#            latency sensitive [utility] we are actively experimenting" and that the default
#            one is back with "uncomment cc.h:302 and comment out cc.h:303" (done here on the
#            lines' text, not their numbers). Built with arch=AMD64 (the Makefiles' default
#            IA32 reads the TSC with a 32-bit asm constraint) and its library before its apps
#            (their Makefiles race under make -j).
#   allegro-lr: the same code built a second time with Allegro's §4.4.2 loss-resilient utility,
#            T·(1 − L), in that line's place: `(t-l)/time*(1-l/t)` in the code's terms (t
#            packets sent in the MI, l of them lost, over its length); the paper ran it for its
#            heavy-loss result (issue 19, claim 1h), the published code has no switch for it.
#   vivace:  g++ >= 11 finds no operator== for `timespec` in its `std::unordered_map` (the
#            code declares one inside namespace std, where two-phase lookup no longer sees it):
#            the same comparison as an inline function at global scope (found by argument-
#            dependent lookup), the namespace-std one in core.cpp removed.
#
# Prints the binaries' paths, one `NAME=PATH` a line, last. Needs g++ and make
# (build-essential, installed with apt-get when missing).
set -euo pipefail
# shellcheck source=scripts/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

MIRROR=${AUTHORS_PCC_MIRROR:-/work/.mirror}
OUT=${AUTHORS_PCC_DIR:-$HOME/.cache/polycc/authors}
JOBS=${JOBS:-2}

if ! command -v g++ >/dev/null || ! command -v make >/dev/null; then
    apt_install "build-authors-pcc.sh" build-essential || exit 1
fi

# fetch NAME OWNER/REPO: the snapshot's tree into $OUT/NAME (fresh each time, so that the
# edits below apply to the authors' text).
fetch() {
    local name=$1 repo=$2 dir="$OUT/$1"
    local git_dir="$MIRROR/${repo/\//+}/repo"
    rm -rf "$dir"
    mkdir -p "$dir"
    if [[ -d $git_dir ]]; then
        git --git-dir="$git_dir" archive HEAD | tar -x -C "$dir"
        git --git-dir="$git_dir" rev-parse HEAD >"$dir/.commit"
    else
        git clone -q --depth 1 "https://github.com/$repo" "$dir"
        git -C "$dir" rev-parse HEAD >"$dir/.commit"
    fi
}

# must_change FILE SED-EXPRESSION: applies the edit and fails if it changed nothing (the
# authors' text is not what this script expects).
must_change() {
    local file=$1 expr=$2 before
    before=$(md5sum "$file")
    sed -i "$expr" "$file"
    if [[ $(md5sum "$file") == "$before" ]]; then
        printf 'build-authors-pcc.sh: %s: the edit %q changed nothing\n' "$file" "$expr" >&2
        exit 1
    fi
}

# build_allegro NAME: modong/pcc into $OUT/NAME, with the NSDI'15 utility (allegro) or the
# loss-resilient one (allegro-lr).
build_allegro() {
    local name=$1
    fetch "$name" modong/pcc
    local d="$OUT/$name"
    local cc="$d/sender/app/cc.h"
    # The NSDI'15 utility (README: "uncomment cc.h:302 and comment out cc.h:303").
    must_change "$cc" 's|^//utility = ((t-l)/time\*(1-1/(1+exp(-100\*(l/t-0.05))))-1\*l/time);|utility = ((t-l)/time*(1-1/(1+exp(-100*(l/t-0.05))))-1*l/time);|'
    must_change "$cc" 's|^utility = ((t-l)/time\*(1-1/(1+exp(-100\*(l/t-0.05))))\* (1-1/(1+exp(-10\*(1-previous_rtt/rtt)))) -1\*l/time)/rtt\*1000;|//&|'
    if [[ $name == allegro-lr ]]; then
        must_change "$cc" 's|^utility = ((t-l)/time\*(1-1/(1+exp(-100\*(l/t-0.05))))-1\*l/time);|utility = (t-l)/time*(1-l/t);|'
    fi
    for side in sender receiver; do
        make -s -C "$d/$side/src" -j"$JOBS" arch=AMD64 >"$d/$side.build.log" 2>&1 ||
            { tail -20 "$d/$side.build.log" >&2; exit 1; }
    done
    make -s -C "$d/sender/app" arch=AMD64 appclient >>"$d/sender.build.log" 2>&1 ||
        { tail -20 "$d/sender.build.log" >&2; exit 1; }
    make -s -C "$d/receiver/app" arch=AMD64 appserver >>"$d/receiver.build.log" 2>&1 ||
        { tail -20 "$d/receiver.build.log" >&2; exit 1; }
}

build_vivace() {
    fetch vivace PCCproject/PCC-Uspace
    local s="$OUT/vivace/src"
    must_change "$s/core/packet_tracker.h" \
        's|^  int operator==(const struct timespec& ts1, const struct timespec& ts2);|} // namespace std\ninline bool operator==(const struct timespec\& ts1, const struct timespec\& ts2) {\n  return ts1.tv_sec == ts2.tv_sec \&\& ts1.tv_nsec == ts2.tv_nsec;\n}\nnamespace std {|'
    must_change "$s/core/core.cpp" '/^  int operator==(const struct timespec& ts1, const struct timespec& ts2) {$/,+2d'
    # Its Makefiles build pcc, core, then app, in order.
    make -s -C "$s" >"$OUT/vivace/build.log" 2>&1 ||
        { grep -m5 error "$OUT/vivace/build.log" >&2; exit 1; }
}

which=${1:-all}
case $which in
    allegro) build_allegro allegro ;;
    allegro-lr) build_allegro allegro-lr ;;
    vivace) build_vivace ;;
    all) build_allegro allegro; build_allegro allegro-lr; build_vivace ;;
    *) echo "usage: $0 [allegro|allegro-lr|vivace|all]" >&2; exit 2 ;;
esac

# Allegro's apps link their side's UDT library (LD_LIBRARY_PATH, as its README says); Vivace's
# are linked statically.
for name in allegro allegro-lr; do
    if [[ $which == "$name" || $which == all ]]; then
        prefix=$(tr a-z- A-Z_ <<<"$name")
        echo "${prefix}_SENDER=$OUT/$name/sender/app/appclient"
        echo "${prefix}_SENDER_LIB=$OUT/$name/sender/src"
        echo "${prefix}_RECEIVER=$OUT/$name/receiver/app/appserver"
        echo "${prefix}_RECEIVER_LIB=$OUT/$name/receiver/src"
    fi
done
if [[ $which == vivace || $which == all ]]; then
    echo "VIVACE_SENDER=$OUT/vivace/src/app/pccclient"
    echo "VIVACE_RECEIVER=$OUT/vivace/src/app/pccserver"
fi
