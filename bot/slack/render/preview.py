"""Messages as one self-contained HTML page, laid out the way Slack shows those blocks.

For looking at a reply without a workspace (`kb ask --html`, `kb demo`) and for the
browser test. It reads the Block Kit it is given, not the answer: sections and context
as mrkdwn (bold, italic, strike, code, blockquotes, links, mentions), headers, dividers
and buttons. Every piece of text is HTML-escaped; only http, https and mailto links
become anchors; the page loads nothing from anywhere (a CSP forbids it).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.slack.render.layout import SlackMessage

_CONTROL = re.compile(r"<([^<>\n]*)>")
_CODE = re.compile(r"`([^`\n]+)`")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
_ENTITY = re.compile(r"&(amp|lt|gt);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">"}
_LINKABLE = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
_BROADCASTS = ("here", "channel", "everyone")


def _styled(marker: str, tag: str) -> tuple[re.Pattern[str], str]:
    m = re.escape(marker)
    pattern = re.compile(rf"(?<![\w{m}]){m}(?!\s)([^{m}\n]+?)(?<!\s){m}(?![\w{m}])")
    return pattern, rf"<{tag}>\1</{tag}>"


_STYLES = (_styled("*", "strong"), _styled("_", "em"), _styled("~", "del"))


@dataclass(frozen=True, slots=True)
class PreviewThread:
    """One question and the messages that answer it."""

    messages: Sequence[SlackMessage]
    question: str | None = None


def preview_html(
    messages: Sequence[SlackMessage],
    *,
    question: str | None = None,
    title: str = "slack-kb reply preview",
) -> str:
    """One reply (the messages of one answer) as an HTML page."""
    return threads_html([PreviewThread(messages=messages, question=question)], title=title)


def threads_html(threads: Sequence[PreviewThread], *, title: str) -> str:
    """Several questions and their replies, one after another, as an HTML page."""
    body = "\n".join(_thread(thread) for thread in threads)
    return _PAGE.format(title=html.escape(title), css=_CSS, body=body)


def _thread(thread: PreviewThread) -> str:
    parts = ['<section class="thread">']
    if thread.question:
        parts.append(
            '<div class="message user"><div class="avatar">You</div><div class="content">'
            '<div class="author">you</div>'
            f'<div class="section">{html.escape(thread.question)}</div></div></div>'
        )
    parts += [_message(message) for message in thread.messages]
    parts.append("</section>")
    return "\n".join(parts)


def _message(message: SlackMessage) -> str:
    blocks = "\n".join(_block(block) for block in message.blocks) or _mrkdwn(message.text)
    return (
        '<article class="message bot"><div class="avatar">kb</div><div class="content">'
        '<div class="author">slack-kb <span class="badge">APP</span></div>'
        f"{blocks}"
        '<details class="fallback"><summary>Notification text</summary>'
        f"{_mrkdwn(message.text)}</details></div></article>"
    )


def _block(block: Mapping[str, Any]) -> str:
    render = _RENDERERS.get(str(block.get("type")))
    if render is None:
        return f'<div class="unknown">{html.escape(str(block.get("type")))} block</div>'
    return render(block)


def _section(block: Mapping[str, Any]) -> str:
    accessory = block.get("accessory")
    extra = _button(accessory) if isinstance(accessory, Mapping) else ""
    return f'<div class="section">{_text(block.get("text"))}{extra}</div>'


def _context(block: Mapping[str, Any]) -> str:
    elements = "".join(
        f'<span class="element">{_text(e)}</span>' for e in block.get("elements", [])
    )
    return f'<div class="context">{elements}</div>'


def _header(block: Mapping[str, Any]) -> str:
    return f'<h3 class="header">{_text(block.get("text"))}</h3>'


def _divider(block: Mapping[str, Any]) -> str:
    return '<hr class="divider">'


def _actions(block: Mapping[str, Any]) -> str:
    buttons = "".join(_button(e) for e in block.get("elements", []) if isinstance(e, Mapping))
    return f'<div class="actions">{buttons}</div>'


def _context_actions(block: Mapping[str, Any]) -> str:
    """Slack's feedback buttons: two small icon buttons at the foot of the message."""
    parts = []
    for element in block.get("elements", []):
        if not isinstance(element, Mapping) or element.get("type") != "feedback_buttons":
            continue
        for side in ("positive_button", "negative_button"):
            button = element.get(side)
            if isinstance(button, Mapping):
                parts.append(
                    _button({**button, "action_id": element.get("action_id", "")}, "feedback")
                )
    return f'<div class="context-actions">{"".join(parts)}</div>'


def _input(block: Mapping[str, Any]) -> str:
    label = _text(block.get("label"))
    return f'<label class="input">{label}<textarea disabled></textarea></label>'


def _button(element: Mapping[str, Any], kind: str = "button") -> str:
    style = element.get("style")
    classes = kind + (f" {style}" if style in ("primary", "danger") else "")
    label = element.get("accessibility_label")
    aria = f' aria-label="{html.escape(str(label))}"' if label else ""
    return (
        f'<button type="button" class="{classes}"{aria}'
        f' data-action-id="{html.escape(str(element.get("action_id", "")))}"'
        f' data-value="{html.escape(str(element.get("value", "")))}">'
        f"{_text(element.get('text'))}</button>"
    )


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "section": _section,
    "context": _context,
    "header": _header,
    "divider": _divider,
    "actions": _actions,
    "context_actions": _context_actions,
    "input": _input,
}


def _text(obj: object) -> str:
    if not isinstance(obj, Mapping) or not isinstance(obj.get("text"), str):
        return ""
    if obj.get("type") == "plain_text":
        return html.escape(obj["text"])
    return _mrkdwn(obj["text"])


def _mrkdwn(text: str) -> str:
    """Slack mrkdwn as HTML: ``` blocks, `>` quotes, then each line's inline formatting."""
    parts = text.replace("\x00", "").split("```")
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            lines = part.strip("\n").split("\n")
            out.append(f"<pre>{chr(10).join(_inline(line, styled=False) for line in lines)}</pre>")
        else:
            out.append(_lines(part))
    return "".join(out)


def _lines(text: str) -> str:
    html_lines: list[str] = []
    quote: list[str] = []
    for line in text.split("\n"):
        if line.startswith(">"):
            quote.append(_inline(line[1:].removeprefix(" ")))
            continue
        if quote:
            html_lines.append(f"<blockquote>{'<br>'.join(quote)}</blockquote>")
            quote = []
        html_lines.append(_inline(line) + "<br>")
    if quote:
        html_lines.append(f"<blockquote>{'<br>'.join(quote)}</blockquote>")
    return "".join(html_lines).removesuffix("<br>")


def _inline(line: str, *, styled: bool = True) -> str:
    """One line: control sequences and code set aside, the rest escaped and styled."""
    rendered: list[str] = []

    def hold(piece: str) -> str:
        rendered.append(piece)
        return f"\x00{len(rendered) - 1}\x00"

    held = _CONTROL.sub(lambda m: hold(_control(m[1])), line)
    if styled:
        held = _CODE.sub(lambda m: hold(f"<code>{_escaped(m[1])}</code>"), held)
    out = _escaped(held)
    if styled:
        for pattern, replacement in _STYLES:
            out = pattern.sub(replacement, out)
    # Code may hold links, so what is restored can itself hold placeholders.
    while "\x00" in out:
        out = _PLACEHOLDER.sub(lambda m: rendered[int(m[1])], out)
    return out


def _escaped(text: str) -> str:
    return html.escape(_decode(text), quote=False)


def _control(inner: str) -> str:
    """A `<…>` sequence as Slack shows it: a link, a mention, or the literal text."""
    target, _, label = inner.partition("|")
    shown = _escaped(label or target)
    for prefix, sign in (("@", "@"), ("#", "#"), ("!subteam^", "@")):
        if target.startswith(prefix):
            name = _escaped(label.removeprefix(sign) or target.removeprefix(prefix))
            return f'<span class="mention">{sign}{name}</span>'
    if target.startswith("!"):
        name = target[1:]
        if name in _BROADCASTS:
            return f'<span class="mention broadcast">@{html.escape(name)}</span>'
        return _escaped(label)
    url = _decode(target)
    if not _LINKABLE.match(url):
        return html.escape(f"<{_decode(inner)}>")
    href = html.escape(url, quote=True)
    return f'<a href="{href}" target="_blank" rel="noopener noreferrer">{shown}</a>'


def _decode(text: str) -> str:
    """Slack's three entities, decoded once (so `&amp;lt;` stays `&lt;` on screen)."""
    return _ENTITY.sub(lambda m: _ENTITIES[m[1]], text)


def messages_json(messages: Sequence[SlackMessage]) -> str:
    """The messages as `chat.postMessage` arguments, for `kb ask --blocks`."""
    return json.dumps([m.post_kwargs() for m in messages], indent=2, ensure_ascii=False)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header class="banner">{title} · how Slack lays out these messages; the buttons do nothing here
</header>
<main>
{body}
</main>
</body>
</html>
"""

_CSS = """
body { margin: 0; background: #fff; color: #1d1c1d; font: 15px/1.46668 -apple-system,
  BlinkMacSystemFont, "Segoe UI", Lato, "DejaVu Sans", Helvetica, Arial, sans-serif; }
.banner { background: #3f0e40; color: #fff; padding: 8px 20px; font-size: 13px; }
main { max-width: 760px; padding: 8px 0 40px; }
.thread { border-bottom: 1px solid #e8e8e8; padding: 8px 0; }
.message { display: flex; gap: 8px; padding: 8px 20px; }
.message:hover { background: #f8f8f8; }
.avatar { flex: none; width: 36px; height: 36px; border-radius: 6px; background: #4a154b;
  color: #fff; font-size: 12px; font-weight: 700; display: flex; align-items: center;
  justify-content: center; }
.user .avatar { background: #1264a3; }
.content { min-width: 0; flex: 1; }
.author { font-weight: 900; }
.badge { font-size: 10px; font-weight: 700; color: #616061; background: #e8e8e8;
  padding: 1px 3px; border-radius: 2px; vertical-align: 1px; }
.section { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.context { margin: 4px 0; color: #616061; font-size: 12px; white-space: pre-wrap; }
.context .element + .element { margin-left: 8px; }
.header { font-size: 18px; font-weight: 900; margin: 8px 0 4px; }
.divider { border: 0; border-top: 1px solid #dddddd; margin: 12px 0; }
blockquote { margin: 4px 0; padding-left: 12px; border-left: 4px solid #dddddd; }
a { color: #1264a3; text-decoration: none; } a:hover { text-decoration: underline; }
code { font: 12px Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; color: #e01e5a;
  background: #f6f6f6; border: 1px solid #e0e0e0; border-radius: 3px; padding: 2px 3px; }
pre { font: 12px Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; background: #f8f8f8;
  border: 1px solid #e0e0e0; border-radius: 4px; padding: 8px; white-space: pre-wrap; }
.mention { color: #1264a3; background: #e8f5fa; border-radius: 3px; padding: 0 2px; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0 4px; }
.context-actions { display: flex; gap: 2px; margin: 2px 0; }
.feedback { border: none; background: none; font-size: 15px; padding: 2px 6px; border-radius: 4px;
  min-width: 28px; min-height: 28px; }
.button { font: inherit; font-size: 13px; font-weight: 700; color: #1d1c1d; background: #fff;
  border: 1px solid #bbbabb; border-radius: 4px; padding: 0 12px; height: 28px;
  cursor: pointer; }
.button.primary { color: #fff; background: #007a5a; border-color: #007a5a; }
.button.danger { color: #e01e5a; border-color: #e01e5a; }
.fallback { color: #616061; font-size: 11px; margin-top: 4px; }
.input { display: block; font-weight: 700; } .input textarea { display: block; width: 100%; }
.unknown { color: #a00; font-style: italic; }
"""
