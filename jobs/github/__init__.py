"""The `github` source: repositories' docs and issues, synced by head commit and tree SHAs."""
