"""How Slack's requests reach the bot and its calls reach Slack: HTTP and Socket Mode, the
bolt app and its middleware, the Web API client, and the pure reading of payloads. See
bot/slack/README.md."""
