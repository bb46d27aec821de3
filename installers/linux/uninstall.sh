#!/usr/bin/env bash
# Remove SPAR Desktop installed by install.sh: exactly the paths in its manifest, nothing else.
#
#   ~/.local/lib/spar-desktop/uninstall.sh [--dry-run]
#
# Your index, workspaces and settings (the data dir, ~/.local/share/spar-desktop unless
# SPAR_DATA_DIR is set) are never in the manifest and are left alone; delete that folder
# yourself if you want them gone.
set -euo pipefail

PREFIX="${SPAR_PREFIX:-$HOME/.local/lib/spar-desktop}"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
MANIFEST="$PREFIX/install-manifest.txt"
DRY=0
case "${1:-}" in
    --dry-run) DRY=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "error: unknown option $1" >&2; exit 1 ;;
esac
[ -f "$MANIFEST" ] || { echo "error: no manifest at $MANIFEST: nothing installed by install.sh here" >&2; exit 1; }

remove() {
    if [ "$DRY" = 1 ]; then echo "would remove $1"; else rm -rf -- "$1"; echo "removed $1"; fi
}

folders=()
while IFS= read -r path; do
    [ -n "$path" ] || continue
    case "$path" in
        /*/) folders=("$path" "${folders[@]}"); continue ;;   # created folders: emptied ones go last
        /*) ;;
        *) echo "skipped (not an absolute path): $path" >&2; continue ;;
    esac
    [ "$path" = "$MANIFEST" ] && continue   # last, below
    if [ -d "$path" ] && [ ! -L "$path" ]; then
        # the only folder install.sh records is the app folder inside the prefix
        case "$path" in
            "$PREFIX"/*) remove "$path" ;;
            *) echo "skipped (a folder outside $PREFIX): $path" >&2 ;;
        esac
    elif [ -e "$path" ] || [ -L "$path" ]; then
        remove "$path"
    fi
done < "$MANIFEST"
remove "$MANIFEST"
# folders install.sh created, deepest first, and only when nothing else was put in them since
for d in "${folders[@]}"; do
    if [ "$DRY" = 1 ]; then echo "would remove $d if empty"; else rmdir -- "$d" 2>/dev/null && echo "removed $d" || true; fi
done
if [ "$DRY" = 0 ]; then
    # caches that were there before the install (else they were in the manifest and are gone):
    # refresh them so they forget our entry and icon
    if command -v update-desktop-database >/dev/null 2>&1 && [ -f "$DATA_HOME/applications/mimeinfo.cache" ]; then
        update-desktop-database -q "$DATA_HOME/applications" || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$DATA_HOME/icons/hicolor/icon-theme.cache" ]; then
        gtk-update-icon-cache -q -t "$DATA_HOME/icons/hicolor" 2>/dev/null || true
    fi
fi
echo "SPAR Desktop removed. Your data dir (${SPAR_DATA_DIR:-$DATA_HOME/spar-desktop}) was left in place."
