"""Evaluation: retrieval metrics and eval, answer eval."""
