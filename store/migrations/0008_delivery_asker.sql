-- How to reach the asker of a /kb question privately, for the start-up recovery
-- (bot/slack/delivery/recovery.py): a private answer lives behind the command's response_url,
-- which no chat.update can reach, and a public one has no thread until the bot has
-- posted the question. asker_user_id is for chat.postEphemeral; response_url (valid
-- 30 minutes, five calls) is cleared when the question finishes; placeholder_ephemeral
-- says the "Searching…" line was shown through it, so the recovery replaces that line
-- (replace_original) rather than adding one below it.
ALTER TABLE slack_deliveries
    ADD COLUMN asker_user_id          text,
    ADD COLUMN response_url           text,
    ADD COLUMN placeholder_ephemeral  boolean NOT NULL DEFAULT false;
