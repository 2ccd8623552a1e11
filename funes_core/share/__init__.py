"""Sharing a memory beyond this machine: named remotes on storage the user owns, push, the mirror.

``remotes`` names remotes (``remotes.toml``, no credentials); ``mirror`` reaches a remote's files
and keeps the local, read-only mirror a remote recall reads; ``manifest`` says which files a Lance
version needs; ``push`` publishes the chunks a remote lacks after the fail-closed secret ``gate``;
``scrub`` and purge are the explicit exceptions to append-only, locally and on every remote.
"""
