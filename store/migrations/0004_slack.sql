-- The Slack bot's tables: deliveries already taken (exactly once), the answers posted
-- (thread <-> run, and each user's recent questions), assistant-panel threads,
-- escalations with their status and resolver, and feedback per run and user.

-- One row per delivery taken: an Events API event id, a request fingerprint (slash
-- commands, buttons, modals) or a message ("message:<channel>:<ts>", so a message that
-- arrives both as app_mention and as message is answered once). The INSERT that creates
-- the row is the claim: a second delivery, from a retry or to another instance, finds it.
CREATE TABLE slack_deliveries (
    key          text PRIMARY KEY,
    kind         text NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slack_deliveries_received_at_idx ON slack_deliveries (received_at);

-- One row per answer the bot gave in Slack: where, to whom, for which run.
CREATE TABLE slack_answers (
    id          bigserial PRIMARY KEY,
    run_id      bigint REFERENCES agent_runs(id) ON DELETE SET NULL,
    team_id     text NOT NULL DEFAULT '',
    channel_id  text NOT NULL,
    thread_ts   text,            -- null for an ephemeral answer
    message_ts  text,            -- the message carrying the buttons
    user_id     text NOT NULL,
    question    text NOT NULL,
    surface     text NOT NULL,   -- mention, command, private, thread, dm, assistant, help
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slack_answers_thread_idx ON slack_answers (channel_id, thread_ts);
CREATE INDEX slack_answers_user_idx ON slack_answers (user_id, created_at DESC);
CREATE INDEX slack_answers_run_idx ON slack_answers (run_id);

-- Threads of Slack's assistant panel, opened by assistant_thread_started.
CREATE TABLE assistant_threads (
    channel_id  text NOT NULL,
    thread_ts   text NOT NULL,
    user_id     text NOT NULL,
    context     jsonb NOT NULL DEFAULT '{}',
    titled      boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel_id, thread_ts)
);

-- A question handed to people: at most one per run.
CREATE TABLE escalations (
    id                bigserial PRIMARY KEY,
    run_id            bigint NOT NULL UNIQUE REFERENCES agent_runs(id),
    team_id           text NOT NULL DEFAULT '',
    channel_id        text NOT NULL,     -- where the question was asked
    thread_ts         text,              -- its thread; null when the answer was ephemeral
    asker_id          text NOT NULL,
    question          text NOT NULL,
    -- The collection the expert's answer is indexed into (the asking channel's).
    collection        text NOT NULL,
    escalated_by      text NOT NULL,
    escalated_at      timestamptz NOT NULL DEFAULT now(),
    thread_permalink  text,
    post_channel_id   text,
    post_ts           text,
    post_permalink    text,
    status            text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    resolved_by       text,
    resolved_at       timestamptz,
    answer            text               -- the expert's answer, when one was given
);
CREATE INDEX escalations_resolved_idx ON escalations (collection) WHERE answer IS NOT NULL;

-- One vote per run and user, changeable; an optional comment.
CREATE TABLE feedback (
    run_id      bigint NOT NULL REFERENCES agent_runs(id) ON DELETE CASCADE,
    user_id     text NOT NULL,
    vote        smallint NOT NULL CHECK (vote IN (-1, 1)),
    comment     text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, user_id)
);
