"""What the fake Web API checks in blocks and views, as Slack does before it accepts them.

Written from Slack's Block Kit reference (docs.slack.dev/reference/block-kit: blocks,
block elements, views) and the methods' pages, on purpose not from `bot/slack/render/limits.py`:
a limit the bot's renderer misreads must not be misread the same way by the fake that
tests it. Each problem is worded as Slack words it in `response_metadata.messages`
("[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"), and the
call fails with `invalid_blocks` (chat.*) or `invalid_arguments` (views.*).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# chat.postMessage: "a maximum of 50 blocks"; a view: 100.
MESSAGE_BLOCKS = 50
VIEW_BLOCKS = 100
# Block and element fields: (maximum length in characters) by JSON path under the block.
_TEXT_LIMITS = {
    "section": {("text", "text"): 3000},
    "header": {("text", "text"): 150},
}
_ELEMENT_COUNTS = {"actions": 25, "context": 10, "context_actions": 5}
_SECTION_FIELDS = 10
_SECTION_FIELD_TEXT = 2000
_BUTTON_TEXT = 75
_BUTTON_VALUE = 2000
_BUTTON_URL = 3000
_ID = 255  # action_id, block_id, callback_id
_VIEW_TITLE = 24
_PRIVATE_METADATA = 3000
# chat.postMessage: "The message text is too long" (msg_too_long) past 40,000 characters.
MESSAGE_TEXT = 40000


def message_problems(blocks: Any) -> list[str]:
    """Slack's error lines for a chat.* call's `blocks` (empty: accepted)."""
    return list(_blocks(blocks, "/blocks", MESSAGE_BLOCKS))


def view_problems(view: Any) -> list[str]:
    """Slack's error lines for a views.* call's `view` (empty: accepted)."""
    if not isinstance(view, Mapping):
        return ["[ERROR] must be an object [json-pointer:/view]"]
    problems = list(_blocks(view.get("blocks", []), "/view/blocks", VIEW_BLOCKS))
    title = view.get("title")
    if view.get("type") == "modal" and not isinstance(title, Mapping):
        problems.append("[ERROR] missing required field: title [json-pointer:/view]")
    elif isinstance(title, Mapping):
        problems += _length(title.get("text"), _VIEW_TITLE, "/view/title/text")
    problems += _length(view.get("private_metadata"), _PRIVATE_METADATA, "/view/private_metadata")
    problems += _length(view.get("callback_id"), _ID, "/view/callback_id")
    return problems


def _blocks(blocks: Any, at: str, most: int) -> Iterator[str]:
    if not isinstance(blocks, list):
        yield f"[ERROR] must be an array [json-pointer:{at}]"
        return
    if len(blocks) > most:
        yield f"[ERROR] must be less than {most + 1} items [json-pointer:{at}]"
    for i, block in enumerate(blocks):
        here = f"{at}/{i}"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            yield f"[ERROR] missing required field: type [json-pointer:{here}]"
            continue
        yield from _length(block.get("block_id"), _ID, f"{here}/block_id")
        for path, limit in _TEXT_LIMITS.get(block["type"], {}).items():
            yield from _length(_get(block, path), limit, f"{here}/{'/'.join(path)}")
        if block["type"] == "section":
            fields = block.get("fields") or []
            if len(fields) > _SECTION_FIELDS:
                most_fields = _SECTION_FIELDS + 1
                yield f"[ERROR] must be less than {most_fields} items [json-pointer:{here}/fields]"
            for j, f in enumerate(fields):
                text = f.get("text") if isinstance(f, Mapping) else None
                yield from _length(text, _SECTION_FIELD_TEXT, f"{here}/fields/{j}/text")
            if isinstance(block.get("accessory"), Mapping):
                yield from _element(block["accessory"], f"{here}/accessory")
        if block["type"] in _ELEMENT_COUNTS:
            elements = block.get("elements")
            if not isinstance(elements, list) or not elements:
                yield f"[ERROR] must provide at least 1 item [json-pointer:{here}/elements]"
                continue
            most_elements = _ELEMENT_COUNTS[block["type"]]
            if len(elements) > most_elements:
                yield (
                    f"[ERROR] must be less than {most_elements + 1} items "
                    f"[json-pointer:{here}/elements]"
                )
            for j, element in enumerate(elements):
                if isinstance(element, Mapping):
                    yield from _element(element, f"{here}/elements/{j}")


def _element(element: Mapping[str, Any], at: str) -> Iterator[str]:
    yield from _length(element.get("action_id"), _ID, f"{at}/action_id")
    if element.get("type") == "button":
        text = element.get("text")
        if not isinstance(text, Mapping) or not text.get("text"):
            yield f"[ERROR] missing required field: text [json-pointer:{at}]"
        else:
            yield from _length(text.get("text"), _BUTTON_TEXT, f"{at}/text/text")
        yield from _length(element.get("value"), _BUTTON_VALUE, f"{at}/value")
        yield from _length(element.get("url"), _BUTTON_URL, f"{at}/url")


def _length(value: Any, limit: int, at: str) -> list[str]:
    if isinstance(value, str) and len(value) > limit:
        return [f"[ERROR] must be less than {limit + 1} characters [json-pointer:{at}]"]
    return []


def _get(block: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = block
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value
