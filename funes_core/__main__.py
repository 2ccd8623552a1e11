"""``python -m funes_core``: the same as the ``funes`` console script.

funes runs itself this way (``funes integrations install`` starts ``funes index`` with the very
interpreter it runs under), so no PATH lookup can pick up another installation.
"""

from __future__ import annotations

from funes_core.faces.cli.main import main

if __name__ == "__main__":
    main()
