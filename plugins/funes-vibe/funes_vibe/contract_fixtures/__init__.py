"""Sample Mistral Vibe sessions, their reviewed goldens and a realistic config: the contract fixtures.

Shipped inside the package so ``funes integrations check vibe`` runs the golden tests on the
installed plugin. Layout: ``cases/<name>/`` (native transcripts + ``expected.funes.jsonl``),
``home/`` (a HOME as the agent leaves it).

If the agent's transcripts are not JSON lines (a database, markdown), define here
``make_earlier(folder) -> bool``, ``make_torn(folder) -> bool``, ``make_corrupt(folder) -> bool``
and ``make_long(folder, filler, expected) -> bool`` (each edits a copy of a case in place and says
whether it could; what each must produce: docs/plugins/testing.md#awkward-inputs): the kit finds
them here, in your pytest run and in ``funes integrations check`` alike.

A golden's ``"cwd": "{case}/sub"`` means the ``sub`` folder of wherever the kit copied the case:
for an agent whose transcript lives in the folder it worked in.
"""
