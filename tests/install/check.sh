#!/usr/bin/env bash
# Installs a build into a temporary prefix, then builds and runs a small C
# program against it through pkg-config: the library as a user gets it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -1)
test -f "$prefix/include/knut/knut.h"
test -f "$libdir/libknut.a"
test -x "$prefix/bin/knut"
# the man pages and completion the build wrote with knut man / completion
test -f "$prefix/share/man/man1/knut.1" && test -f "$prefix/share/man/man1/knut-sync-status.1"
test -f "$prefix/share/bash-completion/completions/knut"
test -f "$prefix/share/zsh/site-functions/_knut"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c17 -Wall -Werror "$here/consumer.c" -o "$prefix/consumer" $(pkg-config --cflags --libs knut)
# The public headers are C99: no duplicate typedefs, no C11-only syntax.
cc -std=c99 -pedantic -Wall -Wextra -Werror "$here/consumer.c" -o "$prefix/consumer99" \
    $(pkg-config --cflags --libs knut)
[ "$("$prefix/consumer99")" = "consumer: SELECT 42 -> 42" ] || {
    echo "install check: the C99 build gives other output"
    exit 1
}
out=$("$prefix/consumer")
echo "$out"
[ "$out" = "consumer: SELECT 42 -> 42" ] || { echo "install check: unexpected output"; exit 1; }
"$prefix/bin/knut" --version
echo "install check: ok"
