-- Threads of a private Slack channel are searchable only in that channel
-- (store/private_collections.py): the slack source marks each such document with
-- metadata.slack.visible_only_in = the channel id. This partial index keeps listing
-- those collections cheap however large the knowledge base grows.
CREATE INDEX documents_visible_only_in
    ON documents ((metadata -> 'slack' ->> 'visible_only_in'))
    WHERE metadata -> 'slack' ? 'visible_only_in';
