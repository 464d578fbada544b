"""The query flow: retrieval tools, the reasoner, grounding verification and the answer model."""
