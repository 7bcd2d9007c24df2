# Sourced by the install scripts: `apt_install WHAT PACKAGE...` installs Debian packages with
# apt-get as root or through password-less sudo, non-interactively, refreshing the package lists
# once if the first attempt fails. Returns 0 when they are installed; otherwise says why (naming
# WHAT, the feature that needs them) and returns 1, so the caller can go on without them.
apt_install() {
    local what=$1
    shift
    if ! command -v apt-get >/dev/null; then
        printf '%s: apt-get not available: install %s yourself\n' "$what" "$*" >&2
        return 1
    fi
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            printf '%s: not root and no password-less sudo: cannot install %s\n' "$what" "$*" >&2
            return 1
        fi
    fi
    printf '%s: installing %s with apt-get\n' "$what" "$*" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 && return 0
    "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 &&
        "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 && return 0
    printf '%s: apt-get could not install %s\n' "$what" "$*" >&2
    return 1
}
