"""A Sphinx hook the book's HTML needs (listed in ``_config.yml`` under ``sphinx.extra_extensions``).

Sphinx 7.4 lists an inline script that an extension adds after the builder started twice: once
from the builder (file name ``None``) and once from the registry (file name ``""``). For
sphinx-thebe's ``const THEBE_JS_URL = ...`` the second copy is a JavaScript SyntaxError on every
page. Each page keeps the first copy of every script.
"""

from __future__ import annotations


def unique_scripts(app, pagename, templatename, context, doctree) -> None:
    seen = set()
    unique = []
    for script in context.get("script_files", []):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"][:] = unique


def setup(app):
    app.connect("html-page-context", unique_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
