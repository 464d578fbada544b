"""A question's lifecycle after the ack: claim, placeholder, progress, streaming, the
answer, leases, and the sweep that recovers what a dead process left. See
bot/slack/README.md."""
