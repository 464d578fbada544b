-- Parallel reindex workers (jobs/queued_writes.py, jobs/worker.py). A coordinating run
-- lists and converts its source, then queues each changed document here, cut into chunks.
-- `kb jobs --worker` processes (and the coordinator itself when no worker runs) claim
-- items with FOR UPDATE SKIP LOCKED under a lease, embed them, and swap each document's
-- chunks in the same transaction that marks its item done with its counts; the claim
-- token guards that transaction, so a worker whose lease expired and was taken over
-- writes nothing. Lease times are the database's clock (now()), never a worker's.
CREATE TABLE index_queue (
    id                bigserial PRIMARY KEY,
    run_id            bigint NOT NULL REFERENCES index_runs(id) ON DELETE CASCADE,
    source_id         bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    uri               text NOT NULL,
    -- The model the coordinator indexes with: only a worker embedding with this model,
    -- while it is the index's active model, may claim the item.
    model_name        text NOT NULL,
    model_dimension   integer NOT NULL,
    chunk_count       integer NOT NULL CHECK (chunk_count > 0),
    -- The document and its chunks as the coordinator cut them; emptied once done.
    payload           jsonb,
    status            text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'done', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,
    claimed_by        text,
    claim_token       uuid,
    lease_expires_at  timestamptz,
    -- What finishing the item did; the run record sums them when the queue drains.
    done_by           text,
    done_at           timestamptz,
    added             boolean,
    chunks_embedded   integer,
    chunks_reused     integer,
    chunks_deleted    integer,
    failure           text,
    UNIQUE (run_id, uri)
);
CREATE INDEX index_queue_pending_idx ON index_queue (id) WHERE status = 'pending';
CREATE INDEX index_queue_claim_token_idx ON index_queue (claim_token);

-- Workers alive: each `kb jobs --worker` process beats here every third of its lease, so
-- a coordinator knows whether to wait for workers or to embed its documents itself.
CREATE TABLE index_workers (
    id               text PRIMARY KEY,
    model_name       text NOT NULL,
    model_dimension  integer NOT NULL,
    lease_seconds    double precision NOT NULL CHECK (lease_seconds > 0),
    started_at       timestamptz NOT NULL DEFAULT now(),
    last_seen_at     timestamptz NOT NULL DEFAULT now()
);
