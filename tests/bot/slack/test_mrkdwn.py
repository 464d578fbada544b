"""Untrusted text as Slack mrkdwn: inert, with only checked links, cut only at safe places."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.slack.render.mrkdwn import (
    escape,
    group_mention,
    inline,
    link,
    safe_url,
    slack_len,
    split,
    user_mention,
)


def test_control_characters_become_entities_so_no_mention_can_form() -> None:
    text = "<!channel> <!here> <!everyone> <@U123> <#C42> <!subteam^S9> a & b"
    escaped = escape(text)
    assert "<" not in escaped and ">" not in escaped
    assert escaped.startswith("&lt;!channel&gt; &lt;!here&gt;")
    assert escaped.endswith("a &amp; b")
    assert escape("&lt;!channel&gt;") == "&amp;lt;!channel&amp;gt;"  # shown as typed


def test_bidi_overrides_and_control_characters_are_dropped() -> None:
    assert escape("pay\u202eyb\x00 now\r\n\tok") == "payyb now\n\tok"


def test_markdown_links_in_quotes_become_slack_links() -> None:
    assert inline("Use [HRLinks](https://hr.example/leave?a=1&b=2) today") == (
        "Use <https://hr.example/leave?a=1&amp;b=2|HRLinks> (hr.example) today"
    )
    wiki = inline("[Foo](https://en.wikipedia.org/wiki/Foo_(bar))")
    assert wiki == "<https://en.wikipedia.org/wiki/Foo_(bar)|Foo> (en.wikipedia.org)"


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        (
            "[the HR portal](https://evil.example/login)",
            "<https://evil.example/login|the HR portal> (evil.example)",
        ),
        (
            "[https://evil.example/x](https://evil.example/x)",
            "<https://evil.example/x|https://evil.example/x>",
        ),
        (
            "[hr.example/leave](https://hr.example/leave)",
            "<https://hr.example/leave|hr.example/leave>",
        ),
        (
            "[mail us](mailto:help@corp.example)",
            "<mailto:help@corp.example|mail us> (help@corp.example)",
        ),
    ],
)
def test_a_document_link_whose_label_is_not_its_url_shows_its_host(
    markdown: str, shown: str
) -> None:
    assert inline(markdown) == shown


@pytest.mark.parametrize(
    "target",
    ["javascript:alert(1)", "data:text/html,x", "/relative/path", "https://", "ftp://x.example/"],
)
def test_only_http_https_and_mailto_targets_are_linked(target: str) -> None:
    assert inline(f"[click]({target})") == "click"
    assert safe_url(target) is None


def test_pipes_and_angle_brackets_cannot_break_out_of_a_link() -> None:
    rendered = link('https://ok.example/a|b<c>d"e', "x|y> <!channel>")
    assert rendered == "<https://ok.example/a%7Cb%3Cc%3Ed%22e|x｜y&gt; &lt;!channel&gt;>"
    assert rendered.count("|") == 1 and rendered.count("<") == 1 and rendered.count(">") == 1


@pytest.mark.parametrize(
    ("label", "url"),
    [
        ("https://bank.example/login", "https://evil.example/"),
        ("bank.example", "https://evil.example/"),
        ("www.bank.example/login", "https://evil.example/"),
        ("boss@bank.example", "mailto:boss@evil.example"),
    ],
)
def test_a_label_naming_another_place_shows_the_real_target(label: str, url: str) -> None:
    assert link(url, label) == f"<{url}|{url}>"


def test_a_label_mentioning_another_place_is_followed_by_the_real_host() -> None:
    rendered = link("https://evil.example/x", "Log in at bank.example today")
    assert rendered == "<https://evil.example/x|Log in at bank.example today> (evil.example)"
    own = link("https://handbook.example/a", "Read handbook.example first")
    assert own == "<https://handbook.example/a|Read handbook.example first>"


@pytest.mark.parametrize("label", ["1", " 2 ", "(3)", "^4"])
def test_a_document_link_labelled_like_a_citation_shows_its_real_target(label: str) -> None:
    url = "https://evil.example/steal"
    assert inline(f"cite [{label}](https://evil.example/steal) here") == f"cite <{url}|{url}> here"
    assert inline("[Form 1](https://ok.example)") == "<https://ok.example|Form 1> (ok.example)"


def test_a_label_naming_its_own_target_is_kept() -> None:
    url = "https://handbook.example/leave/"
    assert link(url, "handbook.example") == f"<{url}|handbook.example>"
    assert link(url, "Leave types") == f"<{url}|Leave types>"


def test_mentions_are_made_only_from_ids_that_look_like_slack_ids() -> None:
    assert user_mention("U0123ABC") == "<@U0123ABC>"
    assert group_mention("S0614TZR7") == "<!subteam^S0614TZR7>"
    for forged in ("U1> <!channel", "channel", "here", "", None, "S1|x", "u123"):
        assert user_mention(forged) is None and group_mention(forged) is None


def test_a_long_text_is_cut_at_sentence_ends_first() -> None:
    text = " ".join(f"Sentence number {n} ends here." for n in range(200))
    pieces = split(text, 300)
    assert all(slack_len(p) <= 300 for p in pieces)
    assert all(p.endswith("ends here.") for p in pieces)
    assert " ".join(pieces) == text


ATOM = re.compile(r"&(?:amp|lt|gt);|<https://x\.example/[^<>|]*\|[^<>]*>")


def test_a_cut_never_falls_inside_an_entity_or_a_link() -> None:
    spaced = inline("&&&&& Stop. " * 30 + "[a. b c d](https://x.example/" + "p" * 100 + ") " * 5)
    unbroken = inline("&<>" * 300 + "[a](https://x.example/q)" * 20)
    for text in (spaced, unbroken):
        for limit in range(130, 400, 7):  # each longer than one link, as sections are
            pieces = split(text, limit)
            assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
            for piece in pieces:
                assert slack_len(piece) <= limit
                rest = ATOM.sub("", piece)
                assert "&" not in rest and "<" not in rest and ">" not in rest, (limit, piece)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from(["& ", "<!channel>", ". ", "\n", "[l](https://x.example/a)", "😀"]),
        ),
        max_size=60,
    ),
    st.integers(min_value=40, max_value=400),
)
def test_split_keeps_every_character_and_every_piece_fits(parts: list[str], limit: int) -> None:
    text = inline("".join(parts))
    pieces = split(text, limit)
    assert all(slack_len(piece) <= limit for piece in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())
