"""A span is never cut inside a Markdown link (agent/language/spans.py `_clauses`): the
':' of "https://" and the dots of a host end no clause, so the span a reply leads with
keeps its link whole instead of showing "see [your profile](https". Nor after the full
stop of a dotted initialism ("the D.C. office")."""

from __future__ import annotations

from agent.language.spans import find_span


def test_an_instruction_with_a_link_is_a_span_with_its_link_whole() -> None:
    quote = (
        "You can check [your meeting profile](https://meet.example.test/profile) to see "
        "your user type and meeting capacity."
    )
    span = find_span(quote, "procedure", "how do I get past the 40-minute limit?")
    assert span == (
        "check [your meeting profile](https://meet.example.test/profile) to see your user "
        "type and meeting capacity."
    )


def test_a_yes_no_answer_keeps_the_channel_link_it_names() -> None:
    quote = "Ask for an account by posting in [#admins-boards](https://chat.test/channels/x)."
    span = find_span(quote, "yes_no", "can I get a whiteboard account?")
    assert span.endswith("(https://chat.test/channels/x).") or span.endswith(
        "(https://chat.test/channels/x)"
    ), span


def test_a_dotted_initialism_ends_no_clause() -> None:
    # The full stop of "D.C." or "e.g." ends no clause either: a reply never leads with
    # "There are maps of the D.C".
    quote = "There are maps of the D.C. office in every elevator lobby."
    assert find_span(quote, "yes_no", "is there a map of the DC office?") == quote
    quote = "Bring a snack, e.g. fruit. Then go to the lobby."
    assert find_span(quote, "procedure", "what should I bring?") == "Bring a snack, e.g. fruit"
