# Sourced by scripts/serve and scripts/test: make .venv with the project installed.
# Usage: bootstrap_venv [extras]   e.g. bootstrap_venv test
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

die() { echo "error: $*" >&2; exit 1; }

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

as_root_apt_install() {
    # Installs Debian packages when we are root; otherwise says what to install.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing Debian packages: $*" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
    else
        die "please install the Debian packages: $* (for example: sudo apt-get install $*)"
    fi
}

bootstrap_venv() {
    local extras="${1:-}" spec="." installed stamp python
    python="$(find_python)" || die "Python 3.11 or newer is required (apt-get install python3)"
    if [ ! -x "$VENV/bin/python" ]; then
        if ! "$python" -m venv "$VENV" >/dev/null 2>&1; then
            rm -rf "$VENV"
            local minor
            minor="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
            as_root_apt_install "python${minor}-venv"
            "$python" -m venv "$VENV"
        fi
    fi
    [ -n "$extras" ] && spec=".[$extras]"
    # Reinstall only when pyproject.toml or the extras changed, so repeated runs start fast.
    # The package alone is in every install of it with extras (scripts/serve after scripts/test).
    installed="$VENV/.installed-$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)"
    stamp="$installed-${extras:-base}"
    if [ -z "$extras" ] && compgen -G "$installed-*" >/dev/null; then
        return 0
    fi
    if [ ! -f "$stamp" ]; then
        echo "Setting up $VENV (pip install -e '$spec') ..." >&2
        "$VENV/bin/python" -m pip install -q --upgrade pip >&2
        (cd "$ROOT" && "$VENV/bin/python" -m pip install -q -e "$spec") >&2
        touch "$stamp"
    fi
}
