-- The change log of 0005 is pruned (`DocumentRepository.prune_change_log`, at the start
-- of every reindex pass): rows older than a day go, since every reader catches up within
-- seconds of a change. This one row records the newest transaction whose rows may be
-- gone; a reader whose snapshot could still need such rows (its xmin is not past it)
-- reads everything again instead of missing a change (store/corpus.py).
CREATE TABLE corpus_changes_pruned (
    only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    through_xid  xid8 NOT NULL
);
INSERT INTO corpus_changes_pruned (through_xid) VALUES ('0');
