"""Sample GitHub Copilot CLI sessions, their reviewed goldens and a realistic config: the contract fixtures.

Shipped inside the package so ``funes integrations check copilot`` runs the golden tests on the
installed plugin. Layout: ``cases/<name>/`` (native transcripts + ``expected.funes.jsonl``),
``home/`` (a HOME as the agent leaves it), ``config-home/`` (a HOME with the user's own config).

If the agent's transcripts are not JSON lines (a database, markdown), define here
``make_earlier(folder) -> bool``, ``make_torn(folder) -> bool``, ``make_corrupt(folder) -> bool``
and ``make_long(folder) -> bool``: the kit finds them and derives its variants with them.
"""
