"""The `slack` source: answered threads of chosen channels, one document per thread."""
