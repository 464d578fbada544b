-- A model change loses nothing: the new model's vectors are built in
-- `chunks.embedding_next` beside the active ones, then swapped in by renaming the
-- columns in one transaction (store/embedding_space.py). `embedding_model` holds the
-- active model and, while a re-embed is under way, the next one.
ALTER TABLE embedding_model DROP CONSTRAINT embedding_model_pkey;
ALTER TABLE embedding_model DROP COLUMN singleton;
ALTER TABLE embedding_model
    ADD COLUMN role text NOT NULL DEFAULT 'active' CHECK (role IN ('active', 'next'));
ALTER TABLE embedding_model ADD PRIMARY KEY (role);

ALTER TABLE chunks ADD COLUMN embedding_next vector;
