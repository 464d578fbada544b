#!/usr/bin/env bash
# The image's install steps, in one place: the Dockerfile runs this script, and so does CI
# (.ci/run), so a step that breaks fails CI although no Docker engine runs there.
#
#   deploy/install.sh [--torch-index URL] PREFIX [SOURCE]
#       Create (or reuse) the virtualenv PREFIX and install slack-kb into it, non-editable,
#       with CPU-only torch; then check, offline, that the packaged model embeds a
#       sentence, export its question graph into PREFIX/query-graphs, and check that
#       the handbook and the migrations came with the package.
#   deploy/install.sh --wheel-only DIR [SOURCE]
#       Only build the wheel into DIR (what the tests inspect).
#
# SOURCE is a built wheel (slack_kb-*.whl) or a source tree; by default the tree this
# script lives in. A source tree is copied to a scratch folder and built there, so the
# tree is never written to (the Dockerfile mounts it read-only).
#
# --torch-index URL (or TORCH_INDEX_URL): the package index torch alone is installed
# from, e.g. https://download.pytorch.org/whl/cpu, where the CPU-only build lives (PyPI's
# Linux torch is the CUDA build, with ~3 GB of NVIDIA packages). Unset, pip's own
# configuration decides: on this project's machines it finds the CPU wheel on local disk.
# Any other PIP_* variable (PIP_NO_CACHE_DIR, PIP_INDEX_URL, ...) is honoured as usual.
set -euo pipefail

usage() { sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }
say() { printf 'install.sh: %s\n' "$*" >&2; }

torch_index="${TORCH_INDEX_URL:-}"
wheel_only=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --torch-index) torch_index="${2:?--torch-index needs a URL}"; shift 2 ;;
        --torch-index=*) torch_index="${1#*=}"; shift ;;
        --wheel-only) wheel_only="${2:?--wheel-only needs a folder}"; shift 2 ;;
        -h | --help) usage 0 ;;
        -*) say "unknown option $1"; usage ;;
        *) break ;;
    esac
done
[[ -n "$wheel_only" && $# -le 1 ]] || [[ -z "$wheel_only" && $# -ge 1 && $# -le 2 ]] || usage

here="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -n "$wheel_only" ]]; then source="${1:-$here}"; else prefix="$1"; source="${2:-$here}"; fi

python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || { say "$python is not Python 3.11 (set PYTHON=...)"; exit 1; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
started=$SECONDS

# --- 1. the wheel -------------------------------------------------------------------------
build_wheel() {  # source tree -> one wheel in $1
    local tree="$scratch/src"
    mkdir -p "$tree"
    # Everything but what a checkout accumulates; setuptools decides what goes in the wheel.
    tar -C "$source" -cf - \
        --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist \
        --exclude='*.egg-info' --exclude=__pycache__ --exclude=./.mypy_cache \
        --exclude=./.ruff_cache --exclude=./.pytest_cache --exclude=./.kb-home \
        --exclude=./bench/out --exclude=./.env . | tar -C "$tree" -xf -
    "$python" -m pip wheel --quiet --no-deps --wheel-dir "$1" "$tree"
}

if [[ -f "$source" && "$source" == *.whl ]]; then
    wheel="$(cd "$(dirname "$source")" && pwd)/$(basename "$source")"
elif [[ -f "$source/pyproject.toml" ]]; then
    out="${wheel_only:-$scratch/dist}"
    mkdir -p "$out"
    build_wheel "$out"
    wheel="$(ls "$out"/slack_kb-*.whl)"
else
    say "$source is neither a slack_kb wheel nor a source tree with pyproject.toml"; exit 1
fi
say "wheel: $wheel"
[[ -z "$wheel_only" ]] || exit 0

# --- 2. the virtualenv, CPU-only torch first, then the wheel -------------------------------
[[ -x "$prefix/bin/python" ]] || "$python" -m venv "$prefix"
pip=("$prefix/bin/python" -m pip --quiet)
"${pip[@]}" install --upgrade pip

# The torch requirement exactly as the wheel states it (pyproject.toml pins it).
torch_req="$("$prefix/bin/python" - "$wheel" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(metadata).decode()
match = re.search(r"^Requires-Dist: (torch(?![\w.-])[^;\n]*)", text, re.MULTILINE)
if match is None:
    sys.exit("install.sh: the wheel does not require torch")
print(match[1].replace(" ", ""))
EOF
)"
say "installing $torch_req${torch_index:+ from $torch_index}"
# Only torch itself from that index; its dependencies come with the wheel's, from the usual
# indexes, so nothing else depends on what the torch index happens to mirror.
"${pip[@]}" install --no-deps "$torch_req" ${torch_index:+--index-url "$torch_index"}
say "installing $(basename "$wheel") and its dependencies (torch's too)"
"${pip[@]}" install "$wheel"
# pip leaves an installed slack-kb of the same version alone; a rerun must install this build.
"${pip[@]}" install --no-deps --force-reinstall "$wheel"
"$prefix/bin/python" -m pip check >/dev/null
# The embedded Postgres's pgvector is built for AVX-512 CPUs; rebuilt here for one without.
"$here/deploy/portable-pgvector.sh" "$prefix/bin/python"

# --- 3. check the install, offline, from outside any source tree --------------------------
cd "$scratch"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 \
    "$prefix/bin/python" -I - <<'EOF'
import asyncio, sys
from pathlib import Path

import torch

import bot
from bot.sample_kb import handbook_root
from store.embedding import SentenceTransformerEmbedder
from store.migrate import bundled_migrations

def check(ok, what):
    if not ok:
        sys.exit(f"install.sh: check failed: {what}")

check(Path(bot.__file__).is_relative_to(sys.prefix), f"bot imported from {bot.__file__}")
check(torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build")
root = handbook_root()
pages = list((root / "pages").rglob("*.md"))
check((root / "SOURCE.md").is_file() and pages, f"no handbook pages under {root}")
check(bundled_migrations(), "no migrations in the package")
# The question graph (store/query_graph.py) is exported here, once, into the install:
# the image points KB_QUERY_GRAPH_DIR at it, so no container start pays the export.
graphs = Path(sys.prefix) / "query-graphs"
embedder = SentenceTransformerEmbedder(torch_threads=1, query_graph_dir=graphs)
vectors = asyncio.run(embedder.embed_batch(["How do I request annual leave?"]))
embedder.close()
check(vectors.shape == (1, embedder.identity.dimension), f"embedding shape {vectors.shape}")
check(
    embedder.query_backend == "onnxruntime" and any(graphs.glob("query-*.onnx")),
    f"no ONNX query graph in {graphs} (the log above says why)",
)
print(
    f"install.sh: checked torch {torch.__version__} (CPU), {embedder.identity.name} "
    f"({embedder.identity.dimension} dims, offline; question graph in {graphs}), "
    f"{len(pages)} handbook pages, "
    f"{len(bundled_migrations())} migrations",
    file=sys.stderr,
)
EOF
"$prefix/bin/kb" --help >/dev/null
say "done in $((SECONDS - started)) s; $prefix holds $(du -sh "$prefix" | cut -f1)"
