"""Markdown pages in the Eleventy handbook dialect (see bot/sample_kb/handbook/SOURCE.md).

A page is YAML front matter, then Markdown with Liquid shortcodes and inline HTML.
The conversion runs the site's own pipeline in miniature: Liquid shortcodes are
expanded to what they mean in text (`{% page %}` to an absolute URL, `{% slack_channel %}`
to a channel link, images and downloads dropped), the Markdown is rendered by
markdown-it (`html: true`, as Eleventy does), and the HTML is written out as cleaned
text by `jobs.formats.html.render_html`, which also makes every link absolute.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import yaml
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from jobs.errors import DocumentError
from jobs.formats import ConvertedDocument
from jobs.formats.html import render_html, resolve_against, url_scheme
from jobs.formats.plaintext import tidy_text

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S | re.M)
_RAW_BLOCK = re.compile(r"\{%-?\s*raw\s*-?%\}(.*?)\{%-?\s*endraw\s*-?%\}", re.S)
_TAG = re.compile(r"\{%-?\s*(\w+)(.*?)-?%\}", re.S)
_TAG_ARGUMENT = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_DOWNLOAD = r"\{%-?\s*download\b.*?%\}"
_DOWNLOAD_ONLY_LINK = re.compile(r"[ \t]*\(\[download\]\(\s*" + _DOWNLOAD + r"\s*\)\)", re.S)
_DOWNLOAD_LINK = re.compile(r"\[([^\]]*)\]\(\s*" + _DOWNLOAD + r"\s*\)", re.S)
_JEKYLL_BASE_URL = re.compile(r"\{\{\s*(?:site|base)\.base_?url\s*\}\}")
_ATTR = r"(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|[^\s}]+))"
_ATTRS = rf"\{{:?\s*{_ATTR}(?:\s+{_ATTR})*\s*\}}"
# markdown-it-attrs: `[text](url){.usa-button}` and `## Heading {#id}`.
_MARKDOWN_ATTRS = re.compile(rf"(?<=[)\]*_`]){_ATTRS}|[ \t]+{_ATTRS}[ \t]*$", re.M)
_HEADING_LINE = re.compile(r"^# (.+)$", re.M)
_DROPPED_TAGS = frozenset({"image", "image_with_class", "download", "include"})


def parse_front_matter(raw: str) -> tuple[dict[str, Any], str]:
    """Split a page into its front matter (parsed as YAML) and its body.

    A page without front matter has an empty mapping. Front matter that is not valid
    YAML, or not a mapping, raises DocumentError: the page would otherwise be indexed
    with the wrong title and URL.
    """
    raw = raw.removeprefix("\ufeff").replace("\r\n", "\n")
    match = _FRONT_MATTER.match(raw)
    if match is None:
        return {}, raw
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise DocumentError(_yaml_reason(error)) from error
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DocumentError("front matter is not a YAML mapping of keys to values")
    return data, raw[match.end() :]


def _yaml_reason(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or "syntax error"
    # The mark counts from 0 within the YAML; the file adds the opening --- line.
    where = f" at line {mark.line + 2}" if mark is not None else ""
    return f"front matter is not valid YAML ({problem}{where}); fix the block between the --- lines"


def handbook_page_url(relative_path: str, *, site_root: str, permalink: str | None) -> str:
    """The public URL of an Eleventy page: its `permalink`, else its path without `pages/`.

    `pages/travel-and-leave/leave.md` -> `{site_root}/travel-and-leave/leave/`; a
    trailing `index` is dropped (`pages/getting-started/index.md` -> `.../getting-started/`).
    """
    if permalink:
        return _join_root(site_root, permalink)
    stem = PurePosixPath(relative_path).with_suffix("").as_posix().removeprefix("pages/")
    stem = "" if stem == "index" else stem.removesuffix("/index")
    return _join_root(site_root, f"/{stem}/" if stem else "/")


def redirect_aliases(front: Mapping[str, Any]) -> list[str]:
    """The page's `redirect_from` aliases (a list, or a single string)."""
    return _string_list(front.get("redirect_from"), split_commas=False)


def build_alias_map(
    pages: Iterable[tuple[str, Sequence[str]]], *, site_root: str
) -> dict[str, str]:
    """Map every page path and `redirect_from` alias to the page's canonical URL.

    `pages` holds `(canonical_url, redirect_from)` for every page. Keys are paths below
    `site_root` with leading and trailing slashes (`/leave/`), so a link written without
    its trailing slash finds its page too. A page's own path wins over another page's
    alias; otherwise the first page to claim an alias keeps it.
    """
    pages = list(pages)
    root = site_root.rstrip("/")
    aliases = {
        _alias_key(url.removeprefix(root)): url for url, _ in pages if url.startswith(root + "/")
    }
    for url, redirects in pages:
        for alias in redirects:
            aliases.setdefault(_alias_key(_url_path(alias)), url)
    return aliases


def convert_markdown(
    raw: str,
    *,
    page_url: str | None,
    site_root: str | None,
    aliases: Mapping[str, str],
    slack_workspace_url: str | None = None,
) -> ConvertedDocument:
    """Convert one handbook-dialect page to cleaned text.

    `page_url` is the page's public URL (relative links resolve against it),
    `site_root` the site's root URL (root-relative links and `{% page %}`), and
    `aliases` the map from `build_alias_map`. Slack channels (`{% slack_channel %}`,
    "ask in #channel" contacts) link into `slack_workspace_url` when it is given, and
    are plain `#channel` text otherwise. The title is returned, not prepended.
    """
    front, body = parse_front_matter(raw)
    links = _Links(
        page_url=page_url,
        site_root=site_root,
        aliases=aliases,
        slack_workspace_url=slack_workspace_url,
    )
    html = _markdown().render(_expand_liquid(body, links))
    text = render_html(BeautifulSoup(html, "lxml"), resolve_link=links.resolve)
    title = _clean_title(front.get("title")) or _first_heading(text)
    questions = _questions(front.get("questions"), links)
    if questions:
        # The site renders these as a "Questions?" footer; people ask "where do I ask".
        lines = "\n".join(f"- {_question_line(question)}" for question in questions)
        text = tidy_text(f"{text}\n\n# Questions?\n\n{lines}")
    permalink = front.get("permalink")
    return ConvertedDocument(
        title=title,
        text=text,
        metadata=_metadata(front, questions),
        permalink=permalink if isinstance(permalink, str) else None,
    )


def _markdown() -> MarkdownIt:
    # Eleventy's markdown-it: the default preset (tables, strikethrough), raw HTML on.
    # Indented code blocks are off: in these pages an indented block is always prose
    # indented to line up with surrounding HTML, which the site shows as a stray code box.
    return MarkdownIt("default", {"html": True}).disable("code")


class _Links:
    """Turns hrefs and `{% page %}` paths into absolute, canonical (de-aliased) URLs."""

    def __init__(
        self,
        *,
        page_url: str | None,
        site_root: str | None,
        aliases: Mapping[str, str],
        slack_workspace_url: str | None,
    ) -> None:
        self._page_url = page_url
        self._site_root = site_root.rstrip("/") if site_root else None
        self._aliases = aliases
        self._slack = slack_workspace_url.rstrip("/") if slack_workspace_url else None

    def slack_channel(self, name: str) -> str | None:
        """The channel's URL in the configured workspace, if there is one."""
        return f"{self._slack}/channels/{name}" if self._slack else None

    def resolve(self, href: str) -> str | None:
        if href.startswith("/") and not href.startswith("//") and self._site_root:
            return self._canonical(self._site_root + href)
        url = resolve_against(href, self._page_url)
        return self._canonical(url) if url else None

    def site_path(self, path: str) -> str:
        """A `{% page %}` argument: root-relative with or without its leading slash."""
        # Eleventy joins it to the path prefix with Node's path.join, which collapses "//".
        path_part, separator, rest = _split_suffix("/" + path.lstrip("/"))
        href = re.sub("/{2,}", "/", path_part) + separator + rest
        return self.resolve(href) or href

    def _canonical(self, url: str) -> str:
        root = self._site_root
        if root is None or not url.startswith(root + "/"):
            return url
        path, separator, rest = _split_suffix(url[len(root) :])
        canonical = self._aliases.get(_alias_key(path))
        return canonical + separator + rest if canonical else url


def _split_suffix(path: str) -> tuple[str, str, str]:
    """Split `/a/b/?q#f` into the path, the first `?`/`#`, and what follows it."""
    match = re.search(r"[?#]", path)
    if match is None:
        return path, "", ""
    return path[: match.start()], match.group(), path[match.end() :]


def _url_path(url: str) -> str:
    try:
        return urlsplit(url).path
    except ValueError:  # a malformed alias names no page
        return url


def _alias_key(path: str) -> str:
    path = "/" + path.strip("/")
    return path if path == "/" else path + "/"


def _join_root(site_root: str, path: str) -> str:
    if url_scheme(path) != "":
        return path
    return site_root.rstrip("/") + "/" + path.lstrip("/")


def _expand_liquid(body: str, links: _Links) -> str:
    """Replace the site's Liquid shortcodes; `{% raw %}` blocks are kept verbatim."""
    pieces = _RAW_BLOCK.split(body)
    for index in range(0, len(pieces), 2):  # odd indexes are the insides of raw blocks
        pieces[index] = _expand_tags(pieces[index], links)
    return "".join(pieces)


def _expand_tags(text: str, links: _Links) -> str:
    text = _DOWNLOAD_ONLY_LINK.sub("", text)
    text = _DOWNLOAD_LINK.sub(r"\1", text)
    text = _JEKYLL_BASE_URL.sub("", text)
    text = _TAG.sub(lambda match: _expand_tag(match, links), text)
    return _MARKDOWN_ATTRS.sub("", text)


def _expand_tag(match: re.Match[str], links: _Links) -> str:
    name = match.group(1)
    args = [double or single for double, single in _TAG_ARGUMENT.findall(match.group(2))]
    if name == "page" and args:
        return links.site_path(args[0])
    if name == "link" and args:
        return args[0] if url_scheme(args[0]) != "" else links.site_path(args[0])
    if name == "slack_channel" and args:
        return _slack_channel_link(args[0], args[1] if len(args) > 1 else None, links)
    if name == "alert":
        # The callout's heading becomes a paragraph of its own above the body.
        heading = args[0].strip() if args else ""
        return f"\n\n{heading}\n\n" if heading else "\n\n"
    if name == "endalert":
        return "\n\n"
    if name in _DROPPED_TAGS:
        return ""
    return match.group(0)  # tags the handbook does not use are left as written


def _slack_channel_link(channel: str, label: str | None, links: _Links) -> str:
    name = channel.strip().lstrip("#")
    url = links.slack_channel(name)
    text = label or "#" + name
    return f"[{text}]({url})" if url else text


def _questions(value: object, links: _Links) -> list[dict[str, str | None]]:
    """The front matter's "ask here" contacts as `{text, url}` mappings."""
    items = value if isinstance(value, list) else [value] if value else []
    questions: list[dict[str, str | None]] = []
    for item in items:
        if isinstance(item, dict) and item.get("text"):
            url = item.get("url")
            resolved = links.resolve(str(url).strip()) if url else None
            questions.append({"text": _one_line(str(item["text"])), "url": resolved})
        elif isinstance(item, str) and "@" in item:
            questions.append({"text": item.strip(), "url": f"mailto:{item.strip()}"})
        elif isinstance(item, str) and item.strip():
            name = item.strip().lstrip("#")
            questions.append({"text": f"#{name}", "url": links.slack_channel(name)})
    return questions


def _question_line(question: Mapping[str, str | None]) -> str:
    text, url = question["text"] or "", question["url"]
    if url is None or url.startswith("mailto:"):
        return text
    return f"[{text}]({url})"


def _metadata(front: Mapping[str, Any], questions: list[dict[str, str | None]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    keywords = _string_list(front.get("keywords"), split_commas=True)
    if keywords:
        metadata["keywords"] = keywords
    if questions:
        metadata["questions"] = questions
    for key in ("subtitle", "permalink"):
        value = front.get(key)
        if isinstance(value, str) and value.strip():
            metadata[key] = _one_line(value)
    redirects = redirect_aliases(front)
    if redirects:
        metadata["redirect_from"] = redirects
    return metadata


def _string_list(value: object, *, split_commas: bool) -> list[str]:
    if isinstance(value, str):
        items = value.split(",") if split_commas else [value]
    elif isinstance(value, list):
        items = [str(item) for item in value if isinstance(item, str | int | float)]
    else:
        return []
    return [item.strip() for item in items if item.strip()]


def _clean_title(value: object) -> str:
    """The title as plain text: some titles carry inline HTML such as <em>before</em>."""
    if not isinstance(value, str | int | float):
        return ""
    return _one_line(BeautifulSoup(str(value), "html.parser").get_text())


def _first_heading(text: str) -> str:
    match = _HEADING_LINE.search(text)
    return match.group(1).strip() if match else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
