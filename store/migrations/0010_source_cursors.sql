-- What connectors with a change feed (jobs/connectors/) need from the store.
--
-- source_cursors: where each source's change feed was last read to (a Notion
-- last_edited_time, a Drive page token, ...), as the connector's own JSON. The reindex
-- writes it only after a run has written every document it listed, so a run that dies
-- half-way starts again from the previous cursor; what it had already written is then
-- found unchanged by its hashes and not embedded again.
CREATE TABLE source_cursors (
    source      text PRIMARY KEY,
    cursor      jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- A document's own collection, when its permissions put it somewhere other than its
-- source's collection (a Notion root page, a Confluence space, a Drive shared drive).
-- NULL: the source's collection, as before. Searches filter on
-- coalesce(documents.collection, sources.collection).
ALTER TABLE documents ADD COLUMN collection text;
