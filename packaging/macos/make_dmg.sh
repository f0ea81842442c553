#!/usr/bin/env bash
# Wrap dist/gpudesk.app (from `python -m PyInstaller ... packaging/gpudesk.spec` on macOS) in a
# compressed disk image with an Applications link:
#
#   bash packaging/macos/make_dmg.sh      ->  dist/gpudesk-<version>-macos-<arm64|x86_64>.dmg
#
# Needs macOS (hdiutil). Sign and notarize the .app before this step for distribution; see
# packaging/macos/README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
VERSION=$(sed -nE "s/^__version__ *= *['\"]([^'\"]+)['\"].*/\1/p" gpudesk/__init__.py)
APP=dist/gpudesk.app
DMG=dist/gpudesk-$VERSION-macos-$(uname -m).dmg
[ -d "$APP" ] || { echo "make_dmg.sh: $APP not found; run PyInstaller with packaging/gpudesk.spec first" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$APP" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$DMG"
hdiutil create -volname "gpudesk $VERSION" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$DMG"
hdiutil verify "$DMG"
echo "$DMG: $(du -m "$DMG" | cut -f1) MB"
