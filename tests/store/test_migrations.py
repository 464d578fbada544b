from __future__ import annotations

import asyncio

import asyncpg

from store.migrate import apply_migrations, bundled_migrations


async def test_migrations_apply_once_and_are_recorded(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        first = await apply_migrations(conn)
        second = await apply_migrations(conn)
        recorded = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()
    assert first == [m.version for m in bundled_migrations()]
    assert second == []
    assert [r["version"] for r in recorded] == first


async def test_two_concurrent_starts_apply_each_migration_exactly_once(database_url: str) -> None:
    conns = [await asyncpg.connect(database_url) for _ in range(2)]
    try:
        results = await asyncio.gather(*(apply_migrations(c) for c in conns))
        tables = await conns[0].fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'chunks'"
        )
    finally:
        for c in conns:
            await c.close()
    applied = sorted(v for result in results for v in result)
    assert applied == [m.version for m in bundled_migrations()]
    assert tables == 1
