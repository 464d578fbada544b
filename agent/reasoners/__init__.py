"""Reasoners: the decision points of the loop, offline (extractive) or with Claude."""
