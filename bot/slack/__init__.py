"""The Slack app: transports, middleware, listeners, the conversation with the agent, and
what it posts (Block Kit)."""
