"""The memory service: one long-lived process per ``$FUNES_HOME`` that holds the memory open.

Why a service. LanceDB, pyarrow, ONNX Runtime and the embedding model cost ~360 MB in any process
that loads them, and every agent session used to start its own ``funes mcp`` (five sessions: ~1.8
GB, each first recall cold). Here they load once, in ``funes serve``, reached over a Unix-domain
socket inside ``$FUNES_HOME`` (0600, in a 0700 folder; never TCP unless asked for). ``funes mcp``
becomes a thin front that relays MCP frames to it, the CLI read verbs ask it when it runs, and
``funes ui`` has it host the web viewer over the memory it holds (on 127.0.0.1, while asked).

- :mod:`~funes_core.serve.wire`: where the service's files live, the line framing and its limits
  (standard library only: the fronts import it);
- :mod:`~funes_core.serve.client`: finding, starting (detached, on demand) and talking to the
  service (standard library only);
- :mod:`~funes_core.serve.service`: the service itself: the lock that makes it one per home, the
  socket, the MCP sessions, CLI calls and viewers it serves, idle exit.
"""
