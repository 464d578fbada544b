"""The panel's rotating loading messages and suggested prompts, as pure functions."""

from __future__ import annotations

from bot.slack.render.loading import MAX_LOADING_CHARS, loading_messages
from bot.slack.surfaces.assistant_desk import suggested_prompts
from store.asked_documents import CitedDocument
from store.catalog import CollectionSummary


def test_loading_messages_are_the_distinct_steps_newest_first_at_most_ten() -> None:
    steps = ["Searching: leave", "Reading: Leave types", "Searching: leave", "Checking quotes"]
    assert loading_messages(steps) == [
        "Checking quotes",
        "Searching: leave",
        "Reading: Leave types",
    ]
    many = [f"Reading: part {n}" for n in range(30)]
    assert loading_messages(many) == [f"Reading: part {n}" for n in range(29, 19, -1)]
    (long,) = loading_messages(["Reading: " + "x" * 500])
    assert len(long) == MAX_LOADING_CHARS and long.endswith("…")
    assert loading_messages([]) == [] and loading_messages(["  "]) == []


def _collection(name: str, *titles: str) -> CollectionSummary:
    return CollectionSummary(name=name, documents=len(titles), sources=(), sample_titles=titles)


def test_prompts_are_the_most_cited_titles_the_panel_may_see_then_one_per_collection() -> None:
    collections = [_collection("hr", "Leave"), _collection("ops", "Equipment", "Travel")]
    cited = [
        CitedDocument("Salaries", "finance", 9),  # a collection the panel may not see
        CitedDocument("Travel", "ops", 5),
        CitedDocument("Leave", "hr", 2),
    ]
    prompts = suggested_prompts(collections, cited)
    assert [p["title"] for p in prompts] == ["Travel", "Leave", "Equipment"]
    assert prompts[0]["message"] == "What should I know about Travel?"
    five = [CitedDocument(f"Doc {n}", "hr", 10 - n) for n in range(6)]
    assert len(suggested_prompts(collections, five)) == 4
    assert suggested_prompts([], cited) == []
