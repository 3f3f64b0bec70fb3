"""Every prompt and input format, one pure function each, by paper (rendered templates in the docstrings)."""
