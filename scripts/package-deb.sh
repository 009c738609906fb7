#!/usr/bin/env bash
# Builds knut_<version>_amd64.deb with dpkg-deb: a Release build installed
# under /usr (binary, libknut.so, headers, knut.pc, man pages, bash and zsh
# completion), the DuckDB library the build links shipped in /usr/lib/knut
# (the binary's and libknut's rpath), the systemd units of packaging/systemd
# and the maintainer scripts of packaging/deb. Depends comes from the
# libraries the ELF files actually link (dpkg-shlibdeps). docs/install.md.
#
#   scripts/package-deb.sh [OUTDIR]     (default: the repository root)
#
# KNUT_DEB_BUILD: the build folder (default build-deb; reused when there,
# so a second run only rebuilds what changed). KNUT_JOBS: ninja's -j.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$here}")
build=$(realpath -m "${KNUT_DEB_BUILD:-$here/build-deb}")
jobs=${KNUT_JOBS:-$(nproc 2>/dev/null || echo 2)}
log() { printf 'package-deb: %s\n' "$*" >&2; }

version=$(sed -n 's/^project(knut VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
[ -n "$version" ] || { log "no project VERSION in CMakeLists.txt"; exit 1; }
arch=$(dpkg --print-architecture)
deb="$out/knut_${version}_${arch}.deb"

"$here/scripts/setup.sh"
log "building knut $version in $build"
# RelWithDebInfo: the build type CI checks warning-free (-O2); the
# debug info is stripped at install.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKNUT_WERROR=ON \
  -DKNUT_TESTS=OFF -DCMAKE_INSTALL_PREFIX=/usr -DKNUT_DUCKDB_INSTALL_DIR=lib/knut \
  -DKNUT_ZSH_COMPLETION_DIR=share/zsh/vendor-completions >/dev/null
ninja -C "$build" -j"$jobs" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/debian/knut" # dpkg-shlibdeps looks for the package's files there
DESTDIR="$root" cmake --install "$build" --strip >/dev/null
# The package is the binary and the shared library: the static one would
# only be for linking with `pkg-config --static` (docs/install.md).
find "$root/usr/lib" -name 'libknut.a' -delete
[ -f "$root/usr/lib/knut/libduckdb.so" ] || {
  log "no bundled libduckdb.so: this build uses a system DuckDB (not packaged)"
  exit 1
}
gzip -9n "$root"/usr/share/man/man1/*.1
install -D -m 0644 -t "$root/lib/systemd/system" "$here"/packaging/systemd/knut-*@.service
install -d -m 0755 "$root/etc/knut/sync" "$root/etc/knut/serve"
install -D -m 0644 "$here/docs/install.md" "$root/usr/share/doc/knut/install.md"

# Depends: the packages of the libraries the ELF files link (libduckdb.so
# is the package's own, so it names none); useradd/userdel for the user.
mkdir -p "$root/DEBIAN"
printf 'Source: knut\n\nPackage: knut\nArchitecture: %s\n' "$arch" >"$work/debian/control"
elves=("$root/usr/bin/knut" "$root"/usr/lib/*/libknut.so.*.*.* "$root/usr/lib/knut/libduckdb.so")
if command -v dpkg-shlibdeps >/dev/null; then
  depends=$(cd "$work" && dpkg-shlibdeps -O -l"$root/usr/lib/knut" "${elves[@]}" 2>/dev/null \
    | sed -n 's/^shlibs:Depends=//p')
else # each NEEDED library's package, at least the version installed here
  owner() { # the package of a library file, under /lib or /usr/lib (merged /usr)
    dpkg -S "$1" 2>/dev/null || dpkg -S "${1#/usr}" 2>/dev/null || dpkg -S "/usr$1" 2>/dev/null
  }
  depends=$(for elf in "${elves[@]}"; do
      found=$(LD_LIBRARY_PATH="$root/usr/lib/knut" ldd "$elf")
      for name in $(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}'); do
        lib=$(awk -v n="$name" '$1 == n && $3 ~ /^\// {print $3}' <<<"$found")
        case $lib in "" | "$root"/*) continue ;; esac
        pkg=$(owner "$(realpath "$lib")" | head -1 | cut -d: -f1)
        [ -n "$pkg" ] && echo "$pkg (>= $(dpkg-query -W -f='${Version}' "$pkg"))"
      done
    done | sort -u | paste -sd, | sed 's/,/, /g')
fi
[ -n "$depends" ] || { log "no Depends found"; exit 1; }

cat >"$root/DEBIAN/control" <<EOF
Package: knut
Version: $version
Architecture: $arch
Maintainer: ${KNUT_DEB_MAINTAINER:-knut maintainers <maintainers@users.noreply.a-seed-4253c62a.example>}
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends, passwd
Section: database
Priority: optional
Description: lakehouse <-> property-graph data fabric
 knut keeps a property graph (FalkorDB or an embedded DuckDB store) in step
 with lakehouse tables (Parquet, CSV, Iceberg), serves DuckDB over Arrow
 Flight SQL, reads and writes GraphAr, and runs declarative pipelines.
 Ships the knut binary, libknut with headers and pkg-config file, the
 DuckDB library it embeds (in /usr/lib/knut), man pages, bash and zsh
 completion, and the systemd units knut-sync@.service and
 knut-serve@.service run as the system user knut.
EOF
install -m 0755 -t "$root/DEBIAN" "$here"/packaging/deb/{postinst,prerm,postrm}

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
log "wrote $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
