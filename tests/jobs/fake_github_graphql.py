"""The slice of GitHub's GraphQL API the `github` source reads (a repository's
discussions), executed by graphql-core against a schema written from GitHub's reference:
a query asking for a field GitHub doesn't have, or a variable of the wrong type, fails
validation here as it does there.

- objects: https://docs.github.com/en/graphql/reference/objects#discussion,
  #discussioncomment, #discussionconnection, #pageinfo
- pagination: https://docs.github.com/en/graphql/guides/using-pagination-in-the-graphql-api
  (a connection needs `first` or `last`, at most 100; cursors are opaque)
- errors: HTTP 200 with an `errors` list; a repository the token can't see is
  `repository: null` with an error of type NOT_FOUND
  (https://docs.github.com/en/graphql/guides/forming-calls-with-graphql#about-queries).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphql import GraphQLError, build_schema, graphql

SDL = """
scalar DateTime
scalar URI

enum DiscussionOrderField { CREATED_AT UPDATED_AT }
enum OrderDirection { ASC DESC }
input DiscussionOrder { field: DiscussionOrderField!, direction: OrderDirection! }

type PageInfo {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  endCursor: String
  startCursor: String
}

interface Actor { login: String! }
type User implements Actor { login: String! }

type DiscussionCategory { name: String! }

type DiscussionComment {
  id: ID!
  body: String!
  createdAt: DateTime!
  isAnswer: Boolean!
  author: Actor
}

type DiscussionCommentConnection {
  nodes: [DiscussionComment]
  pageInfo: PageInfo!
  totalCount: Int!
}

type Discussion {
  id: ID!
  number: Int!
  title: String!
  body: String!
  url: URI!
  createdAt: DateTime!
  updatedAt: DateTime!
  isAnswered: Boolean
  author: Actor
  category: DiscussionCategory!
  answer: DiscussionComment
  comments(first: Int, after: String, last: Int, before: String): DiscussionCommentConnection!
}

type DiscussionConnection {
  nodes: [Discussion]
  pageInfo: PageInfo!
  totalCount: Int!
}

type Repository {
  name: String!
  discussions(
    first: Int, after: String, last: Int, before: String, orderBy: DiscussionOrder
  ): DiscussionConnection!
}

type Query {
  repository(owner: String!, name: String!): Repository
}
"""

SCHEMA = build_schema(SDL)


@dataclass(slots=True)
class FakeDiscussion:
    number: int
    title: str
    body: str
    updated_at: datetime
    author: str = "octocat"
    category: str = "Q&A"
    comments: list[tuple[str, str]] = field(default_factory=list)  # (login, body)
    answer: int | None = None  # index into comments of the accepted answer


async def execute(
    repositories: Callable[[str], tuple[str, dict[int, FakeDiscussion]] | None],
    body: Any,
) -> dict[str, Any]:
    """A GraphQL request's JSON answer; `repositories(owner/name)` gives (html_url,
    discussions) or None when the token can't see it."""
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return {
            "errors": [{"message": "A query attribute must be specified and must be a string."}]
        }
    missing: list[dict[str, Any]] = []

    def repository(_root: Any, info: Any, owner: str, name: str) -> dict[str, Any] | None:
        found = repositories(f"{owner}/{name}")
        if found is None:
            missing.append(
                {
                    "type": "NOT_FOUND",
                    "path": ["repository"],
                    "message": f"Could not resolve to a Repository with the name '{owner}/{name}'.",
                }
            )
            return None
        html_url, discussions = found
        return {"name": name, "discussions": _connection_of(html_url, discussions)}

    result = await graphql(
        SCHEMA,
        body["query"],
        root_value={"repository": repository},
        variable_values=body.get("variables") or None,
        field_resolver=_resolve,
    )
    answer: dict[str, Any] = {}
    if result.data is not None:
        answer["data"] = result.data
    errors = [_error(e) for e in result.errors or []] + missing
    if errors:
        answer["errors"] = errors
    return answer


def _resolve(source: Any, info: Any, **args: Any) -> Any:
    value = source.get(info.field_name) if isinstance(source, dict) else None
    if callable(value):
        return value(source, info, **args)
    return value


def _error(error: GraphQLError) -> dict[str, Any]:
    formatted: dict[str, Any] = dict(error.formatted)
    return formatted


def _connection_of(html_url: str, discussions: dict[int, FakeDiscussion]) -> Any:
    def connection(_source: Any, info: Any, **args: Any) -> dict[str, Any]:
        ordered = sorted(discussions.values(), key=lambda d: d.number)
        order = args.get("orderBy")
        if order is not None:
            ordered.sort(key=lambda d: d.updated_at, reverse=order["direction"] == "DESC")
        nodes = [_discussion_node(html_url, d) for d in ordered]
        return _page(nodes, "discussions", args)

    return connection


def _discussion_node(html_url: str, d: FakeDiscussion) -> dict[str, Any]:
    comments = [
        {
            "id": f"DC_{d.number}_{i}",
            "body": body,
            "createdAt": _iso(d.updated_at),
            "isAnswer": d.answer == i,
            "author": {"login": login, "__typename": "User"},
        }
        for i, (login, body) in enumerate(d.comments)
    ]
    return {
        "id": f"D_{d.number}",
        "number": d.number,
        "title": d.title,
        "body": d.body,
        "url": f"{html_url}/discussions/{d.number}",
        "createdAt": _iso(d.updated_at),
        "updatedAt": _iso(d.updated_at),
        "isAnswered": d.answer is not None,
        "author": {"login": d.author, "__typename": "User"},
        "category": {"name": d.category},
        "answer": comments[d.answer] if d.answer is not None else None,
        "comments": lambda _s, _i, **args: _page(comments, "comments", args),
    }


def _page(items: list[dict[str, Any]], name: str, args: dict[str, Any]) -> dict[str, Any]:
    first, last = args.get("first"), args.get("last")
    if first is None and last is None:
        raise GraphQLError(
            f"You must provide a `first` or `last` value to properly paginate the `{name}` "
            "connection."
        )
    wanted = first if first is not None else last
    if wanted is None or not 0 <= wanted <= 100:
        raise GraphQLError(
            f"Requesting {wanted} records on the `{name}` connection exceeds the "
            f"`{'first' if first is not None else 'last'}` limit of 100 records."
        )
    start = _offset(args["after"]) + 1 if args.get("after") else 0
    chunk = items[start : start + wanted]
    end = start + len(chunk) - 1
    return {
        "nodes": chunk,
        "totalCount": len(items),
        "pageInfo": {
            "hasNextPage": end + 1 < len(items),
            "hasPreviousPage": start > 0,
            "endCursor": _cursor(end) if chunk else None,
            "startCursor": _cursor(start) if chunk else None,
        },
    }


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _offset(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError) as error:
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from error


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
