"""One `kb index` over a folder of broken and hostile files: it finishes, and says what it skipped.

The committed files are in tests/fixtures/hostile; what cannot live in git (binary data,
symlinks, a name that is not UTF-8, huge or deeply nested files) is written here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import asyncpg
import pytest

from tests.jobs.conftest import write_minimal_pdf

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "fixtures" / "hostile"
SECRET = "zebra-4471"

INDEXED = {
    "good-parental-leave.md",
    "good-bike-storage.txt",
    "malformed-link.html",
    "malformed-link-and-liquid.md",
    "caf%E9-hours.txt",
}
FAILED = {
    "empty.md": "empty",
    "whitespace-only.txt": "empty",
    "include-passwd.rst": "empty",
    "fake.pdf": "could not read PDF",
    "truncated.pdf": "could not read PDF",
    "bomb.pdf": "",
    "broken-front-matter.md": "front matter is not valid YAML",
    "list-front-matter.md": "front matter is not a YAML mapping",
    "binary.md": "binary",
    "nul-bytes.txt": "binary",
    "latin1.txt": "not valid UTF-8",
    "nested-divs.html": "nested too deeply",
    "enormous-line.md": "longer than 5 s",
    "loop-a.md": "symlink that loops",
    "loop-b.md": "symlink that loops",
    "leak.md": "outside the source folder",
}


def flate_bomb_pdf(inflated: int) -> bytes:
    """A one-page PDF whose content stream inflates to `inflated` bytes from ~0.1% of that."""
    packer = zlib.compressobj(9)
    piece = b"0 0 m " * 65536
    stream = b"".join(packer.compress(piece) for _ in range(inflated // len(piece)))
    stream += packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    pdf, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    pdf += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return pdf + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )


def build_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "hostile"
    shutil.copytree(HOSTILE, folder)
    (folder / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (folder / "nul-bytes.txt").write_bytes(b"looks like text\x00but is not\n")
    (folder / "latin1.txt").write_bytes("Caf\u00e9 menu: cr\u00eapes".encode("latin-1"))
    (folder / "truncated.pdf").write_bytes(write_minimal_pdf(["Hello"])[:150])
    (folder / "bomb.pdf").write_bytes(flate_bomb_pdf(1 << 30))
    (folder / "nested-divs.html").write_text("<div>" * 20_000 + "deep" + "</div>" * 20_000)
    # 2 MB on one line of unclosed Liquid tags: the converter would chew on it for minutes.
    (folder / "enormous-line.md").write_text("word{% x " * 250_000)
    (folder / "loop-a.md").symlink_to("loop-b.md")
    (folder / "loop-b.md").symlink_to("loop-a.md")
    (folder / "sub").mkdir()
    (folder / "sub" / "again").symlink_to("..", target_is_directory=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Vault\n\nThe vault code is {SECRET}.\n")
    (folder / "leak.md").symlink_to(outside / "secret.md")
    name = os.fsencode(folder) + b"/caf\xe9-hours.txt"
    with open(name, "wb") as handle:
        handle.write(b"The staff cafe opens at eight and serves lunch until two.\n")
    return folder


def kb(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
async def test_one_index_run_over_hostile_files_indexes_the_good_and_reports_the_bad(
    database_url: str, tmp_path: Path
) -> None:
    folder = build_folder(tmp_path)
    sources = tmp_path / "sources.toml"
    sources.write_text(
        f'[[source]]\nname = "hostile"\nkind = "directory"\n[source.settings]\n'
        f'root = "{folder}"\nconvert_timeout_seconds = 5\nconvert_memory_mb = 512\n'
    )
    env = {
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp_path / "home"),
        "KB_SOURCES": str(sources),
    }

    indexed = kb("index", "--source", "hostile", "--json", env=env)

    assert indexed.returncode == 0, indexed.stderr
    assert "Traceback" not in indexed.stderr + indexed.stdout
    record = json.loads(indexed.stdout)
    failures = {f["uri"]: f["reason"] for f in record["failures"]}
    assert set(failures) == set(FAILED), failures
    for uri, expected in FAILED.items():
        assert expected in failures[uri] and "\n" not in failures[uri], (uri, failures[uri])
    assert record["documents_added"] == len(INDEXED)
    assert any(
        "caf%E9-hours.txt: the file name is not valid UTF-8" in w for w in record["warnings"]
    )

    conn = await asyncpg.connect(database_url)
    try:
        uris = {r["uri"] for r in await conn.fetch("SELECT uri FROM documents")}
        leaked = await conn.fetchval(
            "SELECT count(*) FROM documents WHERE text LIKE '%root:%' OR text LIKE $1",
            f"%{SECRET}%",
        )
        status = await conn.fetchval("SELECT status FROM index_runs")
    finally:
        await conn.close()
    assert uris == INDEXED
    assert leaked == 0
    assert status == "partial"

    asked = kb("ask", "How many weeks of paid parental leave do employees get?", "--json", env=env)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["covered"] is True
    assert any("twelve weeks" in claim["quote"] for claim in answer["claims"]), answer
    assert {claim["citation"]["title"] for claim in answer["claims"]} == {"Parental leave"}

    missing = kb("ask", "Where do bikes go?", env={**env, "KB_RERANKER_MODEL": str(tmp_path)})
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "cannot load the cross-encoder" in missing.stderr
