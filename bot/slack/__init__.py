"""The Slack app: listeners, the conversation with the agent, and what it posts (Block Kit)."""
