"""Who may see what where: the access file, the asker's standing, shared channels, and what
a place may be shown. See bot/slack/README.md."""
