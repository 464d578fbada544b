"""The Slack app: transports, middleware, listeners, and the conversation with the agent."""
