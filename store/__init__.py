"""The database: Postgres + pgvector, migrations, repositories, search, and the embedding model."""
