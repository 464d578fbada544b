"""Each entry point: its listener (ack, hand off, return) and the desk that does the work,
plus the clicks' reading, checks and private replies. See bot/slack/README.md."""
