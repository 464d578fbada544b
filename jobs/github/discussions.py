"""A repository's discussions over GitHub's GraphQL API (REST has none): the query, and its
nodes as small typed records.

One query per page of 25 discussions, newest update first, each with its accepted answer
and its first 50 comments: a sync reads pages until it meets a discussion updated before
the last run's newest, so a quiet repository costs one request.
https://docs.github.com/en/graphql/reference/objects#discussion and
https://docs.github.com/en/graphql/guides/using-the-graphql-api-for-discussions
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

PAGE = 25
COMMENTS = 50

QUERY = """
query($owner: String!, $name: String!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: PAGE, after: $cursor, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number
        title
        body
        url
        updatedAt
        isAnswered
        author { login }
        category { name }
        answer { id body createdAt author { login } }
        comments(first: COMMENTS) {
          totalCount
          nodes { id body createdAt author { login } }
        }
      }
    }
  }
}
""".replace("PAGE", str(PAGE)).replace("COMMENTS", str(COMMENTS))


@dataclass(frozen=True, slots=True)
class Reply:
    author: str
    body: str
    created_at: datetime
    is_answer: bool


@dataclass(frozen=True, slots=True)
class Discussion:
    number: int
    title: str
    body: str
    url: str
    updated_at: datetime
    answered: bool
    author: str
    category: str
    replies: tuple[Reply, ...]  # the accepted answer first, then the others in order
    more_replies: bool  # over COMMENTS comments: the rest are not read


@dataclass(frozen=True, slots=True)
class DiscussionPage:
    discussions: tuple[Discussion, ...]
    next_cursor: str | None


def parse_page(data: dict[str, Any]) -> DiscussionPage | None:
    """The page in a query's `data`; None when the repository is not visible."""
    repository = data.get("repository")
    if not isinstance(repository, dict):
        return None
    connection = repository.get("discussions") or {}
    info = connection.get("pageInfo") or {}
    nodes = [n for n in connection.get("nodes") or [] if isinstance(n, dict)]
    cursor = info.get("endCursor") if info.get("hasNextPage") else None
    return DiscussionPage(tuple(_discussion(n) for n in nodes), cursor)


def _discussion(node: dict[str, Any]) -> Discussion:
    answer = node.get("answer") if isinstance(node.get("answer"), dict) else None
    comments = node.get("comments") or {}
    others = [
        _reply(c, is_answer=False)
        for c in comments.get("nodes") or []
        if isinstance(c, dict) and (answer is None or c.get("id") != answer.get("id"))
    ]
    # The accepted answer leads, even when it is not among the first comments read.
    replies = ([_reply(answer, is_answer=True)] if answer else []) + others
    return Discussion(
        number=int(node["number"]),
        title=node.get("title") or "",
        body=node.get("body") or "",
        url=node["url"],
        updated_at=_time(node["updatedAt"]),
        answered=bool(node.get("isAnswered")),
        author=_login(node.get("author")),
        category=(node.get("category") or {}).get("name") or "",
        replies=tuple(replies),
        more_replies=int(comments.get("totalCount") or 0) > len(comments.get("nodes") or []),
    )


def _reply(comment: dict[str, Any], *, is_answer: bool) -> Reply:
    return Reply(
        author=_login(comment.get("author")),
        body=comment.get("body") or "",
        created_at=_time(comment["createdAt"]),
        is_answer=is_answer,
    )


def _login(user: Any) -> str:
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
