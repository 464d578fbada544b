-- Which documents each write transaction touched, so a keyword index can catch up by
-- the documents that changed instead of re-reading every chunk (store/corpus.py,
-- `CorpusReader.changes_since`). Written by triggers, so every writer is covered: the
-- indexer, a model change that empties the index, a source deleted with its documents.
-- `xid` orders nothing by itself; a reader keeps the snapshot it last read at and asks
-- for the rows that snapshot could not see (pg_visible_in_snapshot), which is correct
-- whatever order concurrent writers commit in.
CREATE TABLE corpus_changes (
    xid          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    document_id  bigint NOT NULL,
    changed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX corpus_changes_xid_idx ON corpus_changes (xid);

CREATE FUNCTION log_chunk_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO corpus_changes (document_id) SELECT DISTINCT document_id FROM changed;
    RETURN NULL;
END $$;

CREATE FUNCTION log_document_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO corpus_changes (document_id) SELECT id FROM changed;
    RETURN NULL;
END $$;

-- One statement-level trigger per event: a transition table serves one event only.
CREATE TRIGGER chunks_inserted AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION log_chunk_changes();
CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION log_chunk_changes();
-- No trigger on UPDATE of chunks: a chunk's text never changes under its id (a reindex
-- replaces a document's chunks), and re-embedding in place changes nothing BM25 reads.
-- Titles and dates are part of what the keyword index holds for each chunk.
CREATE TRIGGER documents_updated AFTER UPDATE ON documents
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION log_document_changes();
CREATE TRIGGER documents_deleted AFTER DELETE ON documents
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION log_document_changes();
