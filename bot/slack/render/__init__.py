"""What the bot shows: Block Kit messages and views, mrkdwn, Block Kit's limits, and an
HTML preview. See bot/slack/README.md."""
