"""Connectors: sources read from another system's API through its change feed.

base.py is what every connector shares (the change-feed Source, credentials, the
online check), retry.py the rate-limit and fault policy of every API call, threads.py
running a blocking client off the event loop, errors.py what a connector raises on
purpose. Each system lives in its own module (notion.py, ...).
"""
