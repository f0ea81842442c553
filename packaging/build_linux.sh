#!/usr/bin/env bash
# Build gpudesk for Linux: the one-folder bundle, a .tar.gz of it and a .deb.
#
#   bash packaging/build_linux.sh
#
# From a clean checkout this makes build/venv, installs gpudesk and PyInstaller into it, freezes
# with packaging/gpudesk.spec into dist/gpudesk/, checks the bundle (ldd finds every library,
# `gpudesk --self-test` passes) and writes
#
#   dist/gpudesk-<version>-linux-<machine>.tar.gz     the bundle, to unpack anywhere
#   dist/gpudesk_<version>_<arch>.deb                 /opt/gpudesk, /usr/bin/gpudesk, menu entry, icons
#
# PYTHON=/path/to/python uses that interpreter as it is, without a venv; it must already have
# gpudesk's dependencies and PyInstaller (pip install -e ".[package]"). The tests do this.
# LINTIAN=1 also runs lintian on the .deb (when installed). BUILD_DIR and DIST_DIR move build/
# and dist/ elsewhere (the tests build in a temporary folder).
#
# The build host needs python3 (3.11+, with venv), dpkg-deb and desktop-file-validate for the
# .deb, and the xcb helper libraries, which PyInstaller must find to bundle them:
#   apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0 desktop-file-utils
# A bundle runs on systems with the build host's glibc or newer: build on the oldest you support.
# Outputs stay in build/ and dist/. AppImage is not built (see packaging/README.md).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
APP=gpudesk
VERSION=$(sed -nE "s/^__version__ *= *['\"]([^'\"]+)['\"].*/\1/p" gpudesk/__init__.py)
[ -n "$VERSION" ] || { echo "build_linux.sh: no __version__ in gpudesk/__init__.py" >&2; exit 1; }
MACHINE=$(uname -m)
BUILD=$(mkdir -p "${BUILD_DIR:-build}" && cd "${BUILD_DIR:-build}" && pwd)
DIST=$(mkdir -p "${DIST_DIR:-dist}" && cd "${DIST_DIR:-dist}" && pwd)
BUNDLE=$DIST/$APP
TARBALL=$DIST/$APP-$VERSION-linux-$MACHINE.tar.gz
START=$SECONDS

step() { printf '\n==> %s  [%ds]\n' "$*" $((SECONDS - START)); }
die() { printf 'build_linux.sh: %s\n' "$*" >&2; exit 1; }
mib() { du -sm --apparent-size "$1" | cut -f1; }

# ------------------------------------------------------------------ build host
step "gpudesk $VERSION for Linux $MACHINE"
missing=()
known=$("$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null || true)
for lib in libxcb-cursor.so.0 libxcb-icccm.so.4 libxcb-keysyms.so.1 libxkbcommon-x11.so.0; do
    grep -qF "$lib " <<<"$known" || missing+=("$lib")
done
[ ${#missing[@]} -eq 0 ] || die "the build host lacks ${missing[*]}; PyInstaller would silently leave them out.
Install them first: apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0"

# ------------------------------------------------------------------ Python with PyInstaller
if [ -n "${PYTHON:-}" ]; then
    PY=$PYTHON
    "$PY" -c "import PyInstaller, PySide6, pyqtgraph, sqlalchemy, alembic, platformdirs" 2>/dev/null \
        || die "$PY lacks gpudesk's dependencies or PyInstaller; run: $PY -m pip install -e \".[package]\""
    step "using $PY as it is"
else
    step "build venv in $BUILD/venv"
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 is older than 3.11"
    [ -x "$BUILD/venv/bin/python" ] || python3 -m venv "$BUILD/venv"
    PY=$BUILD/venv/bin/python
    "$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$PY" -m pip install --quiet --disable-pip-version-check -e ".[package]"
fi
"$PY" -c 'import PySide6, PyInstaller, sys; print(f"Python {sys.version.split()[0]}, PySide6 {PySide6.__version__}, PyInstaller {PyInstaller.__version__}")'

# ------------------------------------------------------------------ freeze
step "PyInstaller (one folder) -> $BUNDLE"
"$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$DIST" --workpath "$BUILD/pyinstaller" packaging/gpudesk.spec
[ -x "$BUNDLE/$APP" ] || die "PyInstaller made no $BUNDLE/$APP"

# strip=False in the spec (stripping numpy's patched OpenBLAS breaks it). libpython and the
# standard library's extensions are safe to strip (~20 MB of symbols), and may carry a RUNPATH
# to the build host's Python (pyenv, setup-python) that has no business in a shipped binary.
mapfile -d '' pylibs < <(find "$BUNDLE/_internal" \( -path "$BUNDLE/_internal/libpython3*.so*" \
    -o -path '*/lib-dynload/*.so' \) -type f -print0)
if command -v strip >/dev/null; then
    strip --strip-unneeded "${pylibs[@]}"
else
    echo "no strip (binutils): libpython left unstripped"
fi
if command -v patchelf >/dev/null; then
    for lib in "${pylibs[@]}"; do
        case $(patchelf --print-rpath "$lib") in /*) patchelf --remove-rpath "$lib" ;; esac
    done
else
    echo "no patchelf: the build host's RUNPATH is left in libpython (harmless; lintian names it)"
fi

# ------------------------------------------------------------------ check the bundle
step "ldd: every library the bundle loads is found"
# PyInstaller leaves these to the system on purpose (they must match its drivers and display
# server); the .deb depends on or recommends them. Any other "not found" fails the build.
SYSTEM_LIBS='^(libwayland-(client|cursor|egl|server)|libxcb|libxcb-dri[0-9]*|libdrm|libE?GL|libGLX|libGLdispatch|libOpenGL|libGLESv[12]_?[A-Z]*)\.so'
internal=$BUNDLE/_internal
report=$(mktemp)
while IFS= read -r -d '' file; do
    [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    LD_LIBRARY_PATH="$internal:$internal/PySide6/Qt/lib" ldd "$file" 2>/dev/null \
        | awk -v f="${file#"$BUNDLE"/}" '/not found/ {print $1, f}' >>"$report"
done < <(find "$BUNDLE" -type f \( -name '*.so*' -o -path "$BUNDLE/$APP" \) -print0)
left=$(cut -d' ' -f1 "$report" | sort -u | grep -E "$SYSTEM_LIBS" | tr '\n' ' ' || true)
bad=$(grep -vE "$SYSTEM_LIBS" "$report" || true)
rm -f "$report"
[ -z "$left" ] || echo "left to the system, not installed on this host: $left"
[ -z "$bad" ] || die "libraries not found in the bundle (install them on the build host and rebuild):
$bad"
echo "ok: $(find "$BUNDLE" -type f | wc -l) files, $(mib "$BUNDLE") MiB"

step "self-test of the bundle"
[ "$("$BUNDLE/$APP" --version)" = "$APP $VERSION" ] || die "$BUNDLE/$APP --version does not say $APP $VERSION"
home=$(mktemp -d)
if ! GPUDESK_HOME=$home QT_QPA_PLATFORM=offscreen "$BUNDLE/$APP" --self-test; then
    rm -rf "$home"
    die "the frozen app failed its self-test"
fi
rm -rf "$home"

# ------------------------------------------------------------------ tar.gz
step "tar.gz"
rm -f "$TARBALL"
tar --owner=0 --group=0 --numeric-owner --sort=name -C "$DIST" --transform "s,^$APP,$APP-$VERSION," \
    -czf "$TARBALL" "$APP"
echo "$TARBALL: $(mib "$TARBALL") MiB"

# ------------------------------------------------------------------ .deb
if ! command -v dpkg-deb >/dev/null; then
    step "no dpkg-deb on this host: .deb skipped"
else
    ARCH=$(dpkg --print-architecture)
    GLIBC=$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)  # the bundle needs the build host's glibc or newer
    DEB=$DIST/${APP}_${VERSION}_${ARCH}.deb
    step ".deb ($ARCH)"
    pkg=$BUILD/deb/root
    rm -rf "$BUILD/deb"
    mkdir -p "$pkg/opt" "$pkg/usr/bin" "$pkg/usr/share/applications" "$pkg/usr/share/doc/$APP" \
        "$pkg/usr/share/lintian/overrides" "$pkg/DEBIAN"
    cp -a "$BUNDLE" "$pkg/opt/$APP"
    ln -s "/opt/$APP/$APP" "$pkg/usr/bin/$APP"
    if command -v desktop-file-validate >/dev/null; then
        desktop-file-validate packaging/gpudesk.desktop || die "packaging/gpudesk.desktop is not valid"
    else
        echo "desktop-file-validate not found (apt-get install desktop-file-utils): gpudesk.desktop not validated"
    fi
    install -m 644 packaging/gpudesk.desktop "$pkg/usr/share/applications/$APP.desktop"
    for png in resources/icons/gpudesk-[0-9]*.png; do
        size=${png##*-}
        size=${size%.png}
        install -D -m 644 "$png" "$pkg/usr/share/icons/hicolor/${size}x${size}/apps/$APP.png"
    done
    install -D -m 644 resources/icons/gpudesk.svg "$pkg/usr/share/icons/hicolor/scalable/apps/$APP.svg"
    install -m 644 packaging/debian/copyright "$pkg/usr/share/doc/$APP/copyright"
    printf '%s (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- gpudesk <maintainers@gpudesk.invalid>  %s\n' \
        "$APP" "$VERSION" "$VERSION" "$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")" \
        | gzip -9n >"$pkg/usr/share/doc/$APP/changelog.gz"
    install -m 644 packaging/debian/lintian-overrides "$pkg/usr/share/lintian/overrides/$APP"
    install -m 755 packaging/debian/postinst packaging/debian/postrm "$pkg/DEBIAN/"
    chmod -R u+rwX,go+rX,go-w "$pkg"
    cat >"$pkg/DEBIAN/control" <<EOF
Package: $APP
Version: $VERSION
Architecture: $ARCH
Maintainer: gpudesk <maintainers@gpudesk.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: libc6 (>= $GLIBC), libgl1, libegl1, libxcb1, libfontconfig1, libxkbcommon0, libdbus-1-3
Recommends: libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxkbcommon-x11-0, libwayland-cursor0, libwayland-egl1
Section: science
Priority: optional
Description: choose AI compute and defend the choice
 gpudesk is a desktop app for picking hardware for machine learning: a sourced
 catalogue of accelerators, systems, cloud offerings, prices and grid carbon
 intensity; estimates of throughput, time to train, memory fit, power, energy,
 CO2 and cost with their ranges; comparisons, cluster sketches and procurement
 PDF reports.
 .
 This package installs a self-contained build (Python, Qt and libraries
 included) under /opt/gpudesk.
EOF
    rm -f "$DEB"
    dpkg-deb --root-owner-group -Zxz --build "$pkg" "$DEB" >/dev/null
    echo "$DEB: $(mib "$DEB") MiB"
    if [ "${LINTIAN:-0}" = 1 ]; then  # slow (a minute or more); packaging/debian/lintian-overrides explains what it accepts
        echo "lintian:"
        lintian --tag-display-limit 0 "$DEB" || true
    fi
fi

step "AppImage: skipped (every AppImage tool downloads appimagetool or its runtime while building; build it on a CI runner with internet access)"

step "done"
echo "bundle  $BUNDLE  $(mib "$BUNDLE") MiB"
echo "tar.gz  $TARBALL  $(mib "$TARBALL") MiB"
[ -z "${DEB:-}" ] || echo "deb     $DEB  $(mib "$DEB") MiB"
