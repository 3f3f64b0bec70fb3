"""rcstudy: the shared library behind the reproduction book.

Layers, bottom to top: ``data`` (one loader per dataset, shared record types) →
``models`` (offline/Hub model resolution, training and scoring engines) → chapter
experiment modules → ``report`` (paper-vs-ours tables, checked claims, glue).
"""

__version__ = "0.1.0"
