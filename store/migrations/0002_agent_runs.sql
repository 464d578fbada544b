-- One row per answer run: what was asked and within which scope, every step with its
-- latency, the queries run, the evidence read, what verification kept or dropped, how
-- the run stopped, and the answer given. "Why did it say that?" is one row.
CREATE TABLE agent_runs (
    id                  bigserial PRIMARY KEY,
    created_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz,
    status              text NOT NULL DEFAULT 'running',  -- running, finished, failed
    question            text NOT NULL,
    scope               jsonb NOT NULL DEFAULT '{}',
    -- Where the question came from (channel, thread, user ids), for the bot's own use.
    origin              jsonb NOT NULL DEFAULT '{}',
    history_turns       integer NOT NULL DEFAULT 0,
    reasoner            text NOT NULL DEFAULT '',
    stop_reason         text,
    escalate            boolean,
    steps               jsonb NOT NULL DEFAULT '[]',
    queries             jsonb NOT NULL DEFAULT '[]',
    evidence_chunk_ids  bigint[] NOT NULL DEFAULT '{}',
    verification        jsonb NOT NULL DEFAULT '{}',
    answer              jsonb,
    error               text
);
CREATE INDEX agent_runs_created_at_idx ON agent_runs (created_at);

-- What a trace shows beyond the columns above: the question as searched (a follow-up
-- rewritten to stand alone), the sub-questions with their status, the sources read,
-- notes such as a reasoner falling back, and the run's wall time.
ALTER TABLE agent_runs
    ADD COLUMN standalone_question  text,
    ADD COLUMN sub_questions        jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN sources              jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN notes                jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN latency_ms           double precision;

-- Sentence vectors, so a sentence is embedded once per model, not once per question.
-- Keyed by the model's name as well: a new embedding model never reads an old vector.
CREATE TABLE sentence_vectors (
    model       text NOT NULL,
    text_hash   text NOT NULL,
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, text_hash)
);

-- Counts for evaluation and the trace: retrieval steps, steps taken after every key
-- sub-question was answered, rewritten queries and how many of them added evidence.
ALTER TABLE agent_runs ADD COLUMN stats jsonb NOT NULL DEFAULT '{}';
