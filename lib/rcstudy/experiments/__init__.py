"""One module per chapter: the pipeline functions its notebook calls (everything heavy and reusable)."""
