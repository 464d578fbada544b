"""The composition root: settings, wiring, the CLI (and, later, the Slack app)."""
