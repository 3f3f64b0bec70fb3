"""Models: name resolution (:mod:`.registry`: offline packages, tiny smoke models, Hub ids),
loading (:mod:`.loading`) and the shared engines (:mod:`.mc`, :mod:`.lm`, :mod:`.seq2seq`).

The package itself imports nothing: resolving a name or checking a chapter's parameters must not
wait for torch and transformers to load."""
