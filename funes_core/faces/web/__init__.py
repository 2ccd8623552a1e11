"""The web viewer (``funes ui``): a local, read-only window on one memory, rendered on the server.

``app`` builds the Starlette application from an opened memory handle (so ``funes serve`` can
mount it later), ``guard`` holds its security rules (token cookie, Host and Origin checks, CSP),
``pages`` gathers what each page shows through the read verbs, ``render`` turns it into escaped
HTML with Jinja2, and ``server`` runs it on 127.0.0.1 for ``funes ui``. Nothing here writes to the
memory.
"""
