"""Sphinx hooks the book's HTML needs (listed in ``_config.yml`` under ``sphinx.extra_extensions``).

- Sphinx 7.4 lists an inline script that an extension adds after the builder started twice: once
  from the builder (file name ``None``) and once from the registry (file name ``""``). For
  sphinx-thebe's ``const THEBE_JS_URL = ...`` the second copy is a JavaScript SyntaxError on every
  page. Each page keeps the first copy of every script.
- The book renders executed notebooks (``book/<chapter>.ipynb``), which are built, not kept in the
  repository. The Binder button opens the chapter's source in the repository instead,
  ``chapters/<chapter>.md``, which JupyterLab shows as a notebook through jupytext (``binder/``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

SOURCES_DIR = "chapters"


def unique_scripts(app, pagename, templatename, context, doctree) -> None:
    seen = set()
    unique = []
    for script in context.get("script_files", []):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"][:] = unique


def binder_source_url(url: str, pagename: str) -> str:
    """A Binder launch URL rewritten to open the page's MyST source instead of its built notebook."""
    source = f"{SOURCES_DIR}/{PurePosixPath(pagename).name}.md"
    return re.sub(r"(urlpath=[a-z]+/tree/).*$", lambda m: m.group(1) + source, url)


def launch_sources(app, pagename, templatename, context, doctree) -> None:
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group["buttons"]:
            if button.get("text") == "Binder":
                button["url"] = binder_source_url(button["url"], pagename)


def setup(app):
    app.connect("html-page-context", unique_scripts)
    app.connect("html-page-context", launch_sources, priority=502)  # after the theme adds its buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
