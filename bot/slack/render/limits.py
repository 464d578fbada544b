"""Block Kit's limits, and a check of a message or a view against them.

The numbers are Slack's published ones (docs.slack.dev, Block Kit reference: blocks,
elements, composition objects, views; `chat.postMessage`), except two budgets of ours,
kept below what Slack enforces without documenting it:

- `MESSAGE_TEXT_BUDGET`: Slack rejects a message whose blocks hold too much text in all
  (`msg_blocks_too_long`) at around 12,000 characters, an undocumented total that has
  been seen to fail below that; our messages keep the text of all their blocks together
  under 8,000.
- `FALLBACK_TEXT_BYTES`: `chat.postMessage` truncates `text` at 40,000 characters, but
  `chat.update` refuses a `text` over 4,000 bytes; one limit for both keeps every
  fallback valid for either call.

`violations` is what the tests assert empty on every message the renderers make; callers
may use it as a guard before posting.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bot.slack.render.mrkdwn import slack_len

MESSAGE_BLOCKS = 50
VIEW_BLOCKS = 100
SECTION_TEXT = 3000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
ACTIONS_ELEMENTS = 25
CONTEXT_ACTIONS_ELEMENTS = (
    5  # https://docs.slack.dev/reference/block-kit/blocks/context-actions-block
)
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
BUTTON_URL = 3000
ACCESSIBILITY_LABEL = 75
ACTION_ID = 255
BLOCK_ID = 255
MESSAGE_TEXT = 40000
MESSAGE_TEXT_BUDGET = 8000
FALLBACK_TEXT_BYTES = 4000
VIEW_TITLE = 24
VIEW_BUTTON = 24
PRIVATE_METADATA = 3000
CALLBACK_ID = 255
INPUT_LABEL = 2000
INPUT_MAX_LENGTH = 3000
PLACEHOLDER_TEXT = 150
TEXT_OBJECT = 3000  # context elements and other text objects: as much as a section holds


def violations(*, text: str, blocks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every Block Kit limit a message breaks, in words; empty when Slack will accept it."""
    problems = list(_json_problems({"text": text, "blocks": blocks}))
    if not text.strip():
        problems.append("the fallback text is empty")
    if slack_len(text) > MESSAGE_TEXT or len(text.encode()) > FALLBACK_TEXT_BYTES:
        problems.append(f"the fallback text is {len(text.encode())} bytes")
    if len(blocks) > MESSAGE_BLOCKS:
        problems.append(f"{len(blocks)} blocks, over {MESSAGE_BLOCKS}")
    total = block_text_size(blocks)
    if total > MESSAGE_TEXT_BUDGET:
        problems.append(f"{total} characters of block text, over {MESSAGE_TEXT_BUDGET}")
    problems += _blocks_problems(blocks)
    return problems


def view_violations(view: Mapping[str, Any]) -> list[str]:
    """Every limit a modal or Home tab view breaks."""
    problems = list(_json_problems(view))
    blocks = view.get("blocks", [])
    if len(blocks) > VIEW_BLOCKS:
        problems.append(f"{len(blocks)} blocks in a view, over {VIEW_BLOCKS}")
    for key in ("title", "submit", "close"):
        if key in view:
            problems += _text_problems(view[key], f"view {key}", VIEW_TITLE, plain_only=True)
    if slack_len(view.get("private_metadata", "")) > PRIVATE_METADATA:
        problems.append("private_metadata is too long")
    if slack_len(view.get("callback_id", "")) > CALLBACK_ID:
        problems.append("callback_id is too long")
    return problems + _blocks_problems(blocks)


def block_text_size(blocks: Sequence[Mapping[str, Any]]) -> int:
    """The characters of every text string in `blocks`, as Slack totals them."""
    return sum(slack_len(text) for text in _texts(blocks))


def _texts(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from _texts(value)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _texts(item)


def _json_problems(payload: Any) -> Iterator[str]:
    try:
        json.dumps(payload, ensure_ascii=False).encode()
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        yield f"not JSON-serialisable as UTF-8: {exc}"


def _blocks_problems(blocks: Sequence[Mapping[str, Any]]) -> list[str]:
    problems: list[str] = []
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    if len(block_ids) != len(set(block_ids)):
        problems.append("block ids repeat")
    action_ids: list[str] = []
    for index, block in enumerate(blocks):
        where = f"block {index} ({block.get('type')})"
        if slack_len(block.get("block_id", "")) > BLOCK_ID:
            problems.append(f"{where}: block_id too long")
        problems += _block_problems(block, where, action_ids)
    if len(action_ids) != len(set(action_ids)):
        problems.append("action ids repeat")
    return problems


def _block_problems(block: Mapping[str, Any], where: str, action_ids: list[str]) -> list[str]:
    kind = block.get("type")
    if kind == "section":
        problems = _text_problems(block.get("text"), where, SECTION_TEXT)
        if "accessory" in block:
            problems += _element_problems(block["accessory"], where, action_ids)
        return problems
    if kind == "header":
        return _text_problems(block.get("text"), where, HEADER_TEXT, plain_only=True)
    if kind == "context":
        elements = block.get("elements", [])
        problems = _count_problems(elements, where, CONTEXT_ELEMENTS)
        for element in elements:
            problems += _text_problems(element, where, TEXT_OBJECT)
        return problems
    if kind == "actions":
        elements = block.get("elements", [])
        problems = _count_problems(elements, where, ACTIONS_ELEMENTS)
        for element in elements:
            problems += _element_problems(element, where, action_ids)
        return problems
    if kind == "context_actions":
        elements = block.get("elements", [])
        problems = _count_problems(elements, where, CONTEXT_ACTIONS_ELEMENTS)
        for element in elements:
            problems += _feedback_problems(element, where, action_ids)
        return problems
    if kind == "input":
        return _input_problems(block, where)
    if kind == "divider":
        return []
    return [f"{where}: a block type the renderers do not make"]


def _count_problems(elements: Sequence[Any], where: str, limit: int) -> list[str]:
    return [] if 0 < len(elements) <= limit else [f"{where}: {len(elements)} elements"]


def _element_problems(element: Mapping[str, Any], where: str, action_ids: list[str]) -> list[str]:
    if element.get("type") != "button":
        return [f"{where}: an element the renderers do not make"]
    problems = _text_problems(element.get("text"), f"{where} button", BUTTON_TEXT, plain_only=True)
    action_id = element.get("action_id", "")
    action_ids.append(action_id)
    if not action_id or slack_len(action_id) > ACTION_ID:
        problems.append(f"{where}: bad action_id")
    if slack_len(element.get("value", "")) > BUTTON_VALUE:
        problems.append(f"{where}: button value over {BUTTON_VALUE}")
    if slack_len(element.get("url", "")) > BUTTON_URL:
        problems.append(f"{where}: button url over {BUTTON_URL}")
    if slack_len(element.get("accessibility_label", "")) > ACCESSIBILITY_LABEL:
        problems.append(f"{where}: accessibility_label over {ACCESSIBILITY_LABEL}")
    if element.get("style") not in (None, "primary", "danger"):
        problems.append(f"{where}: bad button style")
    return problems


def _feedback_problems(element: Mapping[str, Any], where: str, action_ids: list[str]) -> list[str]:
    """A feedback_buttons element: two buttons of plain text, value and label, one action id
    (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element)."""
    if element.get("type") != "feedback_buttons":
        return [f"{where}: an element the renderers do not make"]
    action_id = element.get("action_id", "")
    action_ids.append(action_id)
    problems = [] if 0 < slack_len(action_id) <= ACTION_ID else [f"{where}: bad action_id"]
    for side in ("positive_button", "negative_button"):
        button = element.get(side) or {}
        problems += _text_problems(
            button.get("text"), f"{where} {side}", BUTTON_TEXT, plain_only=True
        )
        if not 0 < slack_len(button.get("value", "")) <= BUTTON_VALUE:
            problems.append(f"{where}: {side} value missing or over {BUTTON_VALUE}")
        if slack_len(button.get("accessibility_label", "")) > ACCESSIBILITY_LABEL:
            problems.append(f"{where}: {side} accessibility_label over {ACCESSIBILITY_LABEL}")
    return problems


def _input_problems(block: Mapping[str, Any], where: str) -> list[str]:
    problems = _text_problems(block.get("label"), f"{where} label", INPUT_LABEL, plain_only=True)
    element = block.get("element", {})
    if element.get("type") != "plain_text_input":
        problems.append(f"{where}: an input the renderers do not make")
    if not 0 < element.get("max_length", INPUT_MAX_LENGTH) <= INPUT_MAX_LENGTH:
        problems.append(f"{where}: max_length out of range")
    if "placeholder" in element:
        problems += _text_problems(element["placeholder"], where, PLACEHOLDER_TEXT, plain_only=True)
    return problems


def _text_problems(obj: Any, where: str, limit: int, *, plain_only: bool = False) -> list[str]:
    if not isinstance(obj, Mapping) or not isinstance(obj.get("text"), str):
        return [f"{where}: missing text object"]
    if obj.get("type") not in (("plain_text",) if plain_only else ("plain_text", "mrkdwn")):
        return [f"{where}: text of type {obj.get('type')!r}"]
    size = slack_len(obj["text"])
    if not obj["text"].strip() or size > limit:
        return [f"{where}: text of {size} characters (1 to {limit} allowed)"]
    return []
