"""SQL: every value is a query parameter, and names from configuration cannot inject SQL.

End to end: sources and collections named like SQL (`x'; DROP TABLE documents; --`,
names with `"`) in a sources file and in the Slack access file are indexed by the
reindex job and queried through the Slack path; the answer cites them where the access
file allows, and every table is still there. Statically: no SQL text in store/ or jobs/
is built from a variable, except the identifiers allow-listed below with the reason.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from bot.slack.access.config import AccessPolicy, BotOptions
from jobs.config import load_sources
from tests.bot.slack.rig import mention, user_message

REPO = Path(__file__).resolve().parents[2]
EVIL_SOURCE = "x'; DROP TABLE documents; --"
EVIL_COLLECTION = 'bikes"; DROP TABLE chunks; --'
QUOTED_SOURCE = 'the "quoted" source\\\' OR 1=1'
TABLES = ("sources", "documents", "chunks", "index_runs", "agent_runs", "escalations")


def sources_toml(root: Path) -> str:
    def toml(value: str) -> str:
        return json.dumps(value)  # a JSON string is a valid TOML basic string

    return "\n".join(
        f'[[source]]\nname = {toml(name)}\nkind = "directory"\ncollection = {toml(collection)}\n'
        f"[source.settings]\nroot = {toml(str(root))}\ninclude = [{toml(file)}]\n"
        for name, collection, file in (
            (EVIL_SOURCE, EVIL_COLLECTION, "bikes.md"),
            (QUOTED_SOURCE, "'; DELETE FROM sources; --", "lockers.md"),
        )
    )


async def test_sql_shaped_source_and_collection_names_are_indexed_and_queried_as_data(
    start_bot, fake_slack, tmp_path
):
    (tmp_path / "bikes.md").write_text(
        "# Bikes\n\nStore your bike in the basement cage; facilities hands out the key.\n"
    )
    (tmp_path / "lockers.md").write_text("# Lockers\n\nLockers on floor 3 are first come.\n")
    path = tmp_path / "sources.toml"
    path.write_text(sources_toml(tmp_path), encoding="utf-8")
    channels = f"[access.channels]\nCBIKE = {json.dumps([EVIL_COLLECTION])}\n"
    access = AccessPolicy.from_toml(f'[access]\ndefault = ["ops"]\n{channels}', where="test")
    bot = await start_bot(access=access, options=BotOptions())
    outcome = await bot.runtime.reindex_job(base_dir=tmp_path).run(load_sources(path))
    assert not outcome.errors and [r.documents_added for r in outcome.reports] == [1, 1]
    pool = bot.runtime.pool
    answers = {}
    for channel, ts in (("CBIKE", "1700000700.000001"), ("C111", "1700000701.000001")):
        body = mention("Where do I store my bike?", ts=ts, event_id=f"Ev{ts}", channel=channel)
        fake_slack.add_message(channel, user_message(body))
        await bot.sender.event(body)
        await bot.idle()
        answers[channel] = json.dumps(fake_slack.messages[channel])
    assert "basement cage" in answers["CBIKE"]  # the collection named like SQL is cited
    assert "basement cage" not in answers["C111"]  # and only where the access file says
    for table in TABLES:
        assert await pool.fetchval("SELECT to_regclass($1)", table) is not None, table
    names = {
        r["name"]: r["collection"] for r in await pool.fetch("SELECT name, collection FROM sources")
    }
    assert names[EVIL_SOURCE] == EVIL_COLLECTION and QUOTED_SOURCE in names
    assert await pool.fetchval("SELECT count(*) FROM documents") >= 5  # the fixture corpus too
    runs = await pool.fetch("SELECT source FROM index_runs")
    assert {EVIL_SOURCE, QUOTED_SOURCE} <= {r["source"] for r in runs}


# --- statically: SQL is never formatted from a variable ----------------------------------

_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|SET|TRUNCATE|WITH)\b")
# (file, interpolated expression) → why it cannot carry configuration or user text.
_ROWS = "a TableRows identifier: a module constant, checked as a plain identifier on creation"
ALLOWED = {
    ("store/rows.py", "self.table"): _ROWS,
    ("store/rows.py", "', '.join(self.columns)"): _ROWS,
    ("store/rows.py", "', '.join(self.same_when)"): _ROWS,
    ("store/rows.py", "column"): _ROWS + " (a serial column named in the repository)",
    ("store/rows.py", "order"): _ROWS + " (the key columns, joined)",
    ("store/rows.py", "marks"): "placeholders $1…$n, made from a count",
    ("store/rows.py", "where"): (
        "the key columns with placeholders, or a constant condition written in store/"
    ),
    ("store/corpus.py", "UPDATED_AT"): "a module constant: a SQL expression written here",
    ("store/vector_search.py", "_UPDATED_AT"): "a module constant: a SQL expression written here",
    ("store/vector_search.py", "ef_search"): (
        "an int (max of int() and the limit); SET LOCAL takes no query parameters"
    ),
    ("store/embedding_space.py", "HNSW_INDEX"): "a module constant index name",
    ("store/embedding_space.py", "NEXT_HNSW_INDEX"): "a module constant index name",
    ("store/pgvector_version.py", "version.text"): (
        "an error message that names a command for the admin to run; never executed"
    ),
    ("store/embedding_space.py", "int(model.dimension)"): (
        "an int; a type modifier such as vector(384) cannot be a query parameter"
    ),
    ("store/database.py", "name"): (
        "a setting name, refused unless it matches _SETTING_NAME; SET takes no query parameters"
    ),
    ("store/database.py", "literal"): (
        "a setting's value (from code, not users) with its quotes doubled, inside quotes"
    ),
    ("store/database.py", "self.statements"): (
        "the SET text built from checked names and quoted values, run on connect and reset"
    ),
}


def formatted_sql(path: Path) -> list[str]:
    """The expressions formatted into SQL-looking strings (f-strings, %, .format, +)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if _SQL.search(text):
                found += [
                    ast.unparse(v.value) for v in node.values if isinstance(v, ast.FormattedValue)
                ]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
            sides = (node.left, node.right)
            if any(isinstance(s, ast.Constant) and _SQL.search(str(s.value)) for s in sides):
                found += [
                    ast.unparse(s)
                    for s in sides
                    if not isinstance(s, ast.Constant | ast.JoinedStr)
                    and not (isinstance(s, ast.Name) and s.id.lstrip("_").isupper())
                ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and _SQL.search(str(node.func.value.value))
        ):
            found += [ast.unparse(a) for a in [*node.args, *(k.value for k in node.keywords)]]
    return found


def test_no_sql_in_store_or_jobs_is_built_from_a_variable_but_the_allowed_identifiers():
    formatted = {
        (path.relative_to(REPO).as_posix(), expression)
        for folder in ("store", "jobs")
        for path in sorted((REPO / folder).rglob("*.py"))
        for expression in formatted_sql(path)
    }
    assert formatted - ALLOWED.keys() == set()
    assert formatted, "the check found nothing at all: is it still looking at the code?"


def test_the_check_catches_the_usual_ways_of_formatting_a_value_into_sql(tmp_path):
    code = tmp_path / "bad.py"
    code.write_text(
        "a = f\"SELECT * FROM sources WHERE name = '{name}'\"\n"
        "b = \"DELETE FROM documents WHERE uri = '%s'\" % uri\n"
        "c = \"UPDATE chunks SET text = '{}'\".format(text)\n"
        'd = "SELECT * FROM sources WHERE name = \'" + name + "\'"\n'
        "e = f'nothing to see {here}'\n"
    )
    assert formatted_sql(code) == ["name", "uri", "text", "name"]


def test_table_rows_refuse_a_name_that_is_not_a_plain_identifier():
    from store.rows import TableRows

    with pytest.raises(ValueError, match="identifier"):
        TableRows(
            table="runs; DROP TABLE documents",
            columns=("id",),
            json_columns=frozenset(),
            key=("id",),
            same_when=("id",),
        )
