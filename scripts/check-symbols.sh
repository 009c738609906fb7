#!/usr/bin/env bash
# Checks that libknut's symbols are its public API and nothing else.
#
#   check-symbols.sh --shared  LIBKNUT.so [INCLUDE_DIR]
#       Fails on a symbol libknut.so exports that no public header declares,
#       on a public declaration without KNUT_EXTERN in front of it, and on
#       one that libknut.so does not export (no definition).
#   check-symbols.sh --internal LIBKNUT.a [INCLUDE_DIR]
#       Fails on a global symbol of the static library that is neither
#       public nor named knut_<part>__<name> (the internal-helper rule).
#   check-symbols.sh --public [INCLUDE_DIR]
#       Prints the public declarations, one "name extern|plain" a line.
#
# The public API is read from every include/knut/*.h, preprocessed (so
# KNUT_EXTERN shows as its visibility attribute): each top-level function
# or extern-data declaration of those files is public; static inline
# definitions, typedefs and macros are not symbols. CC (default cc) does the
# preprocessing; nm reads the libraries.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
parts="core net arrow duck graphar iceberg graph sync serve pipeline spark viewer"

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# The public declarations: "name extern" (KNUT_EXTERN) or "name plain".
public_decls() {
    local inc=$1 tu
    tu=$(mktemp --suffix=.c)
    for h in "$inc"/knut/*.h; do
        printf '#include "knut/%s"\n' "$(basename "$h")"
    done >"$tu"
    "${CC:-cc}" -E -std=c99 -I "$inc" "$tu" | python3 -c '
import re, sys

inc = sys.argv[1].rstrip("/") + "/knut/"
text = sys.stdin.read()
# Keep only what comes from the public headers (line markers say the file).
keep, chunks, cur_file = False, [], None
for line in text.split("\n"):
    m = re.match(r"^# \d+ \"([^\"]*)\"", line)
    if m:
        if m.group(1) != cur_file:
            chunks.append("\n;\n")  # a change of file ends any statement
        cur_file = m.group(1)
        keep = cur_file.startswith(inc)
        continue
    if keep:
        chunks.append(line + "\n")
src = "".join(chunks)

def strip_attrs(s):
    out, i = [], 0
    while True:
        j = s.find("__attribute__", i)
        if j < 0:
            out.append(s[i:])
            return "".join(out)
        out.append(s[i:j])
        k = s.index("(", j)
        depth = 0
        while True:
            if s[k] == "(":
                depth += 1
            elif s[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1

stmts, cur, brace, paren, funcdef = [], [], 0, 0, False
for ch in src:
    cur.append(ch)
    if ch == "(":
        paren += 1
    elif ch == ")":
        paren -= 1
    elif ch == "{":
        if brace == 0:
            head = strip_attrs("".join(cur[:-1])).strip()
            funcdef = head.endswith(")")
        brace += 1
    elif ch == "}":
        brace -= 1
        if brace == 0 and funcdef:
            stmts.append(("def", "".join(cur)))
            cur, funcdef = [], False
    elif ch == ";" and brace == 0 and paren == 0:
        stmts.append(("decl", "".join(cur)))
        cur = []

ident = r"[A-Za-z_][A-Za-z0-9_]*"
for kind, s in stmts:
    if kind != "decl":
        continue
    s = " ".join(s.split()).rstrip(";").strip()
    if not s or re.match(r"(typedef|static)\b", s):
        continue
    exported = "visibility" in s
    body = strip_attrs(s).strip()
    if re.match(r"^(struct|union|enum)\s+" + ident + r"\s*(\{.*\})?\s*$", body):
        continue  # a tag declaration or definition, no object
    if "(" in body:
        m = re.search(r"\(\s*\*\s*(" + ident + r")\s*\)\s*\(", body)  # void (*fp)(...)
        if not m:
            m = re.search(r"(" + ident + r")\s*\(", body)
    else:
        m = re.search(r"(" + ident + r")\s*(\[[^\]]*\]\s*)*(=.*)?$", body)
    if m:
        print(m.group(1), "extern" if exported else "plain")
' "$inc"
    rm -f "$tu"
}

# Symbols the toolchain adds to any library, never ours.
toolchain_symbol() {
    case "$1" in
    _init | _fini | _edata | _end | __bss_start | _DYNAMIC | _GLOBAL_OFFSET_TABLE_) return 0 ;;
    __asan_* | __odr_asan* | __ubsan_* | __sanitizer_* | __lsan_* | __gcov_*) return 0 ;;
    esac
    return 1
}

mode=${1:-}
[ -n "$mode" ] || usage
shift
if [ "$mode" = --public ]; then
    public_decls "${1:-$here/../include}"
    exit 0
fi
lib=${1:?the library to check}
inc=${2:-$here/../include}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case "$mode" in
--shared)
    public_decls "$inc" | sort -u >"$tmp/declared"
    awk '{ print $1 }' "$tmp/declared" >"$tmp/names"
    awk '$2 == "plain" { print $1 }' "$tmp/declared" >"$tmp/plain"
    nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
        while read -r sym; do toolchain_symbol "$sym" || echo "$sym"; done |
        sort -u >"$tmp/exported"
    comm -23 "$tmp/exported" "$tmp/names" | sed 's/^/exported but not in a public header: /' >"$tmp/bad"
    comm -13 "$tmp/exported" "$tmp/names" >"$tmp/missing"
    sed 's/^/public declaration without KNUT_EXTERN in front: /' "$tmp/plain" >>"$tmp/bad"
    comm -23 "$tmp/missing" "$tmp/plain" |
        sed 's/^/public but not exported (no definition in libknut): /' >>"$tmp/bad"
    n=$(wc -l <"$tmp/names")
    if [ -s "$tmp/bad" ]; then
        cat "$tmp/bad"
        echo "check-symbols: $lib does not export exactly the $n public declarations"
        exit 1
    fi
    echo "check-symbols: $lib exports exactly the $n public declarations"
    ;;
--internal)
    public_decls "$inc" | awk '{ print $1 }' | sort -u >"$tmp/names"
    re="^knut_($(tr ' ' '|' <<<"$parts"))__[A-Za-z0-9_]+$"
    # "symbol member.o" for every global defined symbol (nm -A prints
    # "lib.a:member.o:address type symbol").
    nm -A -g --defined-only "$lib" 2>/dev/null |
        awk 'NF >= 3 { split($1, f, ":"); print $NF, f[2] }' | sort -u -k1,1 >"$tmp/globals"
    awk '{ print $1 }' "$tmp/globals" | comm -23 - "$tmp/names" |
        while read -r sym; do
            toolchain_symbol "$sym" || [[ "$sym" =~ $re ]] || echo "$sym"
        done >"$tmp/odd"
    if [ -s "$tmp/odd" ]; then
        join "$tmp/odd" "$tmp/globals" |
            awk '{ print "internal symbol not named knut_<part>__<name>: " $1 " (" $2 ")" }'
        echo "check-symbols: internal helpers must be named knut_<part>__<name>," \
            "parts: $parts"
        exit 1
    fi
    echo "check-symbols: every internal symbol of $lib is named knut_<part>__<name>"
    ;;
*)
    usage
    ;;
esac
