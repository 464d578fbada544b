-- What became of each question the bot took (slack_deliveries), so a process killed
-- mid-answer leaves a trace the next start-up can act on: acked (the row exists),
-- where the answer goes (reply_channel, reply_thread_ts), the placeholder once posted
-- (placeholder_ts), and finished_at with the outcome: answered, failed (the failure line
-- shown), silent (a help channel with nothing grounded to say) or abandoned (the
-- process died; a later start-up replaced the placeholder with "please ask again").
-- Deliveries that are not questions (buttons, commands, App Home) leave them null.
ALTER TABLE slack_deliveries
    ADD COLUMN reply_channel    text,
    ADD COLUMN reply_thread_ts  text,
    ADD COLUMN placeholder_ts   text,
    ADD COLUMN finished_at      timestamptz,
    ADD COLUMN outcome          text
        CHECK (outcome IN ('answered', 'failed', 'silent', 'abandoned'));
CREATE INDEX slack_deliveries_unfinished_idx ON slack_deliveries (received_at)
    WHERE reply_channel IS NOT NULL AND finished_at IS NULL;
