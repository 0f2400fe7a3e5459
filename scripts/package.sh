#!/usr/bin/env bash
# Builds the Debian packages from the repository: `scripts/package.sh [OUTDIR]`
# (default target/debian). Plain dpkg-deb: the package is one binary, a
# unit, a man page and a few configuration files, which cargo-deb would
# only move around while adding a tool to install; lintian checks the
# result either way.
#
#   htaccel_VERSION_ARCH.deb         /usr/sbin/htaccel (stripped), the systemd
#                                    unit, logrotate, /etc/default/htaccel,
#                                    /etc/htaccel/htaccel.conf, man page, docs
#   htaccel-dbgsym_VERSION_ARCH.deb  the debug information, by build ID
#
# Needs: cargo, dpkg-deb, objcopy (binutils), help2man, gzip.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-target/debian}"
# Who the packages name as maintainer: DEB_MAINTAINER overrides.
maintainer="${DEB_MAINTAINER:-htaccel developers <htaccel@example.org>}"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
arch=$(dpkg --print-architecture)
target="${CARGO_TARGET_DIR:-$PWD/target}"

cargo build --release -p htaccel
bin="$target/release/htaccel"
build_id=$(readelf -n "$bin" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg="$stage/htaccel"
dbg="$stage/htaccel-dbgsym"

# The binary without its debug information; that goes to the dbgsym
# package under /usr/lib/debug/.build-id, where gdb finds it.
install -d "$pkg/usr/sbin" "$dbg/usr/lib/debug/.build-id/${build_id:0:2}"
objcopy --only-keep-debug --compress-debug-sections "$bin" \
    "$dbg/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
objcopy --strip-debug --strip-unneeded \
    --add-gnu-debuglink="$dbg/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug" \
    "$bin" "$pkg/usr/sbin/htaccel"
chmod 0755 "$pkg/usr/sbin/htaccel"
chmod 0644 "$dbg/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"

install -D -m 0644 packaging/htaccel.service "$pkg/usr/lib/systemd/system/htaccel.service"
install -D -m 0644 packaging/htaccel.logrotate "$pkg/etc/logrotate.d/htaccel"
install -D -m 0644 packaging/default "$pkg/etc/default/htaccel"
install -D -m 0644 packaging/htaccel.conf "$pkg/etc/htaccel/htaccel.conf"

# The man page, from the program's own help.
install -d "$pkg/usr/share/man/man8"
help2man --no-info --section=8 --name="web server for Apache httpd configurations, .htaccess compiled once" \
    --version-string="$version" "$pkg/usr/sbin/htaccel" |
    gzip -9n >"$pkg/usr/share/man/man8/htaccel.8.gz"

doc="$pkg/usr/share/doc/htaccel"
install -d "$doc"
install -m 0644 packaging/copyright "$doc/copyright"
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
printf 'htaccel (%s) unstable; urgency=medium\n\n  * Built from the repository.\n\n -- %s  %s\n' \
    "$version" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"
install -d "$dbg/usr/share/doc"
ln -s htaccel "$dbg/usr/share/doc/htaccel-dbgsym"

install -d "$pkg/DEBIAN" "$dbg/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
depends=$(dpkg-shlibdeps -O -e "$pkg/usr/sbin/htaccel" 2>/dev/null | sed -n 's/^shlibs:Depends=//p' || true)
[ -n "$depends" ] || depends="libc6, zlib1g, libcrypt1"
sed -e "s/@VERSION@/$version/" -e "s|@MAINTAINER@|$maintainer|" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    packaging/control >"$pkg/DEBIAN/control"
printf '/etc/default/htaccel\n/etc/htaccel/htaccel.conf\n/etc/logrotate.d/htaccel\n' >"$pkg/DEBIAN/conffiles"
install -m 0755 packaging/postinst packaging/postrm packaging/prerm "$pkg/DEBIAN/"
dsize=$(du -sk --exclude=DEBIAN "$dbg" | cut -f1)
cat >"$dbg/DEBIAN/control" <<CONTROL
Package: htaccel-dbgsym
Source: htaccel
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $dsize
Depends: htaccel (= $version)
Section: debug
Priority: optional
Description: debug symbols for htaccel
 The debug information of /usr/sbin/htaccel, found by its build ID.
CONTROL

mkdir -p "$out"
dpkg-deb --root-owner-group --build "$pkg" "$out/htaccel_${version}_${arch}.deb" >/dev/null
dpkg-deb --root-owner-group --build "$dbg" "$out/htaccel-dbgsym_${version}_${arch}.deb" >/dev/null
ls -l "$out"/*.deb
