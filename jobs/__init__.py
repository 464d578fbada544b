"""The write flow: sources, cleaning, chunking and (re)indexing into the store."""
