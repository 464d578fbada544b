"""How an expected answer phrase is matched in a quote: as a reader sees the quote."""

from __future__ import annotations

from agent.eval.answers import squad_normalise


def test_a_phrase_inside_a_markdown_link_is_read_as_the_link_s_text() -> None:
    quote = "Approved: - Any [Made by Trello](https://trello.com/power-ups/made-by-trello) one."
    assert " made by trello " in f" {squad_normalise(quote)} "


def test_squad_s_rules_still_hold() -> None:
    assert squad_normalise("The  Very-high-speed, Backbone!") == "veryhighspeed backbone"
