"""Properties over arbitrary input: converters fail only with DocumentError; chunks are exact cuts.

Hypothesis generates the inputs; examples are few and the deadline off, so the suite
stays fast on two shared cores while every run still tries new shapes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.chunking import ChunkingPolicy, chunk_text
from jobs.errors import DocumentError
from jobs.file_conversion import decode_text
from jobs.formats import ConvertedDocument
from jobs.formats.html import convert_html
from jobs.formats.markdown import convert_markdown
from jobs.formats.pdf import convert_pdf
from jobs.formats.plaintext import convert_plaintext
from jobs.formats.restructuredtext import convert_restructuredtext

FEW = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

# Markup-ish fragments, so generated documents hit the parsers' interesting paths.
_PIECES = st.sampled_from(
    [
        "<a href=\"http://[x\">x</a>", "<div>", "</div>", "<table><tr><td>", "<br>", "<!--",
        "[link](http://[::1)", "{% page '/x/' %}", "{% slack_channel \"a\" %}", "{% raw %}",
        "---\n", "title: [", "# ", "## H\n", "\n\n", "```", ".. include:: /etc/passwd\n",
        ".. raw:: html\n   :file: /etc/passwd\n", "`x <http://[y>`_", "* ", "1. ", "|", "\t",
        "&#0;", "&amp;", "\x00", "\ud7ff", "é", "\u202e", "::\n\n  ", "====\n", "<base href='//['>",
    ]
)  # fmt: skip
MARKUP = st.lists(st.one_of(_PIECES, st.text(max_size=20)), max_size=30).map("".join)
TEXT = st.one_of(st.text(max_size=400), MARKUP)


def _only_document_errors(convert: Callable[[str], ConvertedDocument], raw: str) -> None:
    try:
        converted = convert(raw)
    except DocumentError as error:
        assert error.reason and "\n" not in error.reason
        return
    assert isinstance(converted.text, str) and isinstance(converted.title, str)


@FEW
@given(TEXT)
def test_markdown_conversion_raises_nothing_but_document_error(raw: str) -> None:
    _only_document_errors(
        lambda text: convert_markdown(
            text,
            page_url="https://site.example/a/",
            site_root="https://site.example",
            aliases={"/a/": "https://site.example/a/"},
            slack_workspace_url="https://team.slack.com",
        ),
        raw,
    )


@FEW
@given(TEXT)
def test_html_conversion_raises_nothing_but_document_error(raw: str) -> None:
    _only_document_errors(lambda text: convert_html(text, page_url="https://site.example/"), raw)


@FEW
@given(TEXT)
def test_rst_conversion_raises_nothing_but_document_error(raw: str) -> None:
    _only_document_errors(lambda text: convert_restructuredtext(text, page_url=None), raw)


@FEW
@given(TEXT)
def test_plain_text_conversion_raises_nothing_but_document_error(raw: str) -> None:
    _only_document_errors(convert_plaintext, raw)


_PDF_START = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"


@FEW
@given(st.one_of(st.binary(max_size=600), st.binary(max_size=600).map(_PDF_START.__add__)))
def test_pdf_conversion_raises_nothing_but_document_error(data: bytes) -> None:
    _only_document_errors(lambda _: convert_pdf(data), "")


@FEW
@given(st.binary(max_size=600))
def test_decoding_bytes_raises_nothing_but_document_error(data: bytes) -> None:
    _only_document_errors(lambda _: convert_plaintext(decode_text(data)), "")


# --- the chunker -------------------------------------------------------------------------

_WORD = re.compile(r"\S+")
WORDS = st.text(alphabet="abcdefghij .,!?:;'\"()", min_size=1, max_size=12)
PARAGRAPH = st.lists(WORDS, min_size=1, max_size=120).map(" ".join)
BLOCK = st.one_of(
    PARAGRAPH,
    PARAGRAPH,
    st.builds(lambda level, text: "#" * level + " " + text, st.integers(1, 4), WORDS),
)
DOCUMENT = st.lists(BLOCK, max_size=25).map("\n\n".join)
POLICIES = st.builds(
    lambda low, extra, overlap, modulus: ChunkingPolicy(
        min_words=low, max_words=max(1, low + extra), overlap_words=overlap, anchor_modulus=modulus
    ),
    st.integers(0, 60),
    st.integers(0, 120),
    st.integers(0, 30),
    st.integers(1, 4),
)


@FEW
@given(st.one_of(st.text(max_size=600), DOCUMENT), POLICIES)
def test_chunk_spans_always_map_back_to_the_text(text: str, policy: ChunkingPolicy) -> None:
    chunks = chunk_text(text, policy)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert text[chunk.start : chunk.end] == chunk.text


@FEW
@given(DOCUMENT, POLICIES)
def test_chunks_cover_every_paragraph_and_overlap_at_most_the_policy(
    text: str, policy: ChunkingPolicy
) -> None:
    chunks = chunk_text(text, policy)
    covered = [False] * len(text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    position = 0
    for block in text.split("\n\n"):
        if not block.startswith("#"):  # a heading alone is not text to retrieve
            assert all(covered[position + m.start()] for m in _WORD.finditer(block)), block
        position += len(block) + 2
    for before, after in itertools.pairwise(chunks):
        assert after.start >= before.start
        shared = text[after.start : before.end] if after.start < before.end else ""
        assert len(_WORD.findall(shared)) <= policy.overlap_words
