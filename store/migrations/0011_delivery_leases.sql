-- Questions are recovered continuously, not only at start-up (bot/slack/delivery/sweep.py).
-- lease_until: the process answering a question renews it while it works (a
-- heartbeat); a row whose lease ran out belongs to a process that died, and a sweep on
-- any replica takes it. runs: how many times it was started (a question is re-run once,
-- then its asker is told to ask again). question: what a re-run needs (the asker, the
-- text, the surface, the channel type, the message asked in); cleared, like the
-- response_url, once the question finishes.
ALTER TABLE slack_deliveries
    ADD COLUMN lease_until  timestamptz,
    ADD COLUMN runs         smallint NOT NULL DEFAULT 1,
    ADD COLUMN question     jsonb;
-- Rows claimed before leases existed keep the old start-up rule: five minutes.
UPDATE slack_deliveries SET lease_until = received_at + interval '300 seconds'
    WHERE reply_channel IS NOT NULL AND finished_at IS NULL;
DROP INDEX slack_deliveries_unfinished_idx;
CREATE INDEX slack_deliveries_unfinished_idx ON slack_deliveries (lease_until)
    WHERE reply_channel IS NOT NULL AND finished_at IS NULL;
