-- Sources, documents, chunks with their embeddings, the embedding model identity,
-- the corpus version (bumped by every index change) and index runs.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE sources (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    kind        text NOT NULL,
    collection  text NOT NULL DEFAULT 'default',
    config      jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
    id                bigserial PRIMARY KEY,
    source_id         bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    uri               text NOT NULL,
    title             text NOT NULL,
    url               text,
    content_hash      text NOT NULL,
    metadata_hash     text NOT NULL,
    metadata          jsonb NOT NULL DEFAULT '{}',
    text              text NOT NULL,
    source_updated_at timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, uri)
);

-- `embedding` gets its dimension (and the HNSW index) when the first embedding model
-- is recorded: see store/embedding_space.py.
CREATE TABLE chunks (
    id            bigserial PRIMARY KEY,
    document_id   bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal       integer NOT NULL,
    text          text NOT NULL,
    text_hash     text NOT NULL,
    char_start    integer NOT NULL,
    char_end      integer NOT NULL,
    heading_path  text[] NOT NULL DEFAULT '{}',
    embedding     vector,
    UNIQUE (document_id, ordinal),
    CHECK (char_start >= 0 AND char_end >= char_start)
);
CREATE INDEX chunks_text_hash_idx ON chunks (text_hash);

CREATE TABLE embedding_model (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    name         text NOT NULL,
    dimension    integer NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE corpus_version (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version    bigint NOT NULL
);
INSERT INTO corpus_version (version) VALUES (0);

CREATE TABLE index_runs (
    id           bigserial PRIMARY KEY,
    source       text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    status       text NOT NULL DEFAULT 'running',
    counts       jsonb NOT NULL DEFAULT '{}',
    failures     jsonb NOT NULL DEFAULT '[]'
);
