"""The contract's requirements: stable ids, where each comes from, and what it asks of a plugin.

Every contract test carries ``@requirement("<id>")`` naming one entry here, and every entry has
at least one test (a meta-test enforces both directions). Ids are stable: a requirement is never
renamed or reused, only added (with ``added_in``) or retired in a new contract version. A new
requirement lands ``provisional`` for a release: its failures are reported as warnings (a
non-strict xfail) so plugin authors get a grace period instead of a red CI overnight.

``docs/plugins/requirements.md`` is rendered from this module (:func:`render_markdown`) and
checked against it by the core's tests.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REQUIREMENTS", "ROLES", "Requirement", "get", "render_markdown", "resolve"]


def resolve(rid: str, cls: type | None) -> str:
    """A test's requirement id with ``{role}`` filled in from its contract class's ``role``.

    A test shared by both wiring roles is written once and marked ``{role}:idempotent``; run in
    ``HookInstallerContract`` it checks ``installer:idempotent``, in ``ToolRegistrarContract``
    ``registrar:idempotent``.
    """
    role = getattr(cls, "role", None)
    return rid.replace("{role}", role) if "{role}" in rid and isinstance(role, str) else rid


@dataclass(frozen=True, slots=True)
class Requirement:
    """One thing a plugin must do, checked by one or more contract tests."""

    id: str
    #: Where the rule comes from: a section of the funes design or behaviour spec.
    source: str
    #: What the plugin must do, in one or two sentences.
    behaviour: str
    #: The contract version that introduced it.
    added_in: int = 1
    #: Reported as a warning, not a failure, until it becomes mandatory.
    provisional: bool = False

    @property
    def role(self) -> str:
        return self.id.split(":", 1)[0]


_CONVERTER = (
    Requirement(
        "converter:identity",
        "DESIGN §4",
        "The class declares an id matching [a-z0-9_-]+, a non-empty label and contract_version 2, "
        "implements every abstract method and can be built without arguments.",
    ),
    Requirement(
        "converter:discover-empty-home",
        "DESIGN §4; behaviour §8.3",
        "discover() on a HOME where the agent never ran returns no sessions and does not raise; "
        "agent_found() is false there.",
    ),
    Requirement(
        "converter:discover",
        "behaviour §8.1, §8.3",
        "discover() finds the sessions of a HOME laid out as the agent leaves it, newest first, "
        "every one of them convertible, without reading the real ~.",
    ),
    Requirement(
        "converter:golden",
        "behaviour §8.5",
        "Converting each sample session yields exactly the expected turns (expected.funes.jsonl): "
        "no block the agent wrote is dropped, reordered or altered (a cwd inside the case's folder "
        "is written {case}/...).",
    ),
    Requirement(
        "converter:schema",
        "behaviour §4.1",
        "Every turn validates against the published turns JSON schema (funes_core.parse_line) "
        "and survives a round trip unchanged.",
    ),
    Requirement(
        "converter:harness",
        "behaviour §4.1",
        "Every turn's harness is the integration id.",
    ),
    Requirement(
        "converter:seq-dense",
        "behaviour §4.1, §8.5",
        "Within each session, seq runs 0, 1, 2, ... in emission order, with no gap or repeat.",
    ),
    Requirement(
        "converter:unique-ids",
        "behaviour §4.1",
        "turn_uuid is unique within a session.",
    ),
    Requirement(
        "converter:ts-utc",
        "behaviour §4.1",
        "Every ts is an RFC 3339 timestamp in UTC with a Z suffix and a real calendar date.",
    ),
    Requirement(
        "converter:deterministic",
        "DESIGN §1 (no LLM in the ingest path)",
        "Converting the same transcript twice, with two fresh converters, yields identical bytes.",
    ),
    Requirement(
        "converter:stable-ids",
        "DESIGN §4; behaviour §4.1",
        "When a transcript grows, the turns of the earlier transcript keep their session_id, "
        "turn_uuid and seq: the earlier conversion is a prefix of the later one.",
    ),
    Requirement(
        "converter:torn-tail",
        "behaviour §8.5",
        "A last record cut off mid-write, inside its text (the agent is still writing), does not crash "
        "the converter; the complete records before it are converted as usual: exactly as those "
        "records alone convert, for JSON lines.",
    ),
    Requirement(
        "converter:bad-record",
        "behaviour §8.5",
        "An unreadable record in the middle of a transcript is skipped; every other record is "
        "converted exactly as without it.",
    ),
    Requirement(
        "converter:foreign-files",
        "behaviour §8.1",
        "sessions_in() on a folder of files that are not this agent's transcripts does not raise, "
        "and whatever it returns converts to no turns.",
    ),
    Requirement(
        "converter:spool-atomic",
        "behaviour §4.1 (producer rules), §8.1",
        "Spool files are written under a temporary name that does not end in .jsonl, in the same "
        "folder, then renamed into place; no temporary file is left behind.",
    ),
    Requirement(
        "converter:spool-layout",
        "behaviour §8.1",
        "write_spool() writes exactly one $FUNES_HOME/spool/<id>/<session_id>.funes.jsonl per "
        "session, holding that session's turns, readable by funes_core.read_turns_file.",
    ),
    Requirement(
        "converter:spool-mtime",
        "behaviour §8.1",
        "Each spool file's mtime is the session's last activity (its newest turn's ts), so the "
        "spool drains the newest sessions first.",
    ),
    Requirement(
        "converter:spool-idempotent",
        "DESIGN §4 (install is idempotent)",
        "Writing the same session into the spool again changes no byte and reports changed=False.",
    ),
    Requirement(
        "converter:no-side-effects",
        "issue 14 (contract 2)",
        "Finding and converting sessions writes nothing: the transcripts stay byte for byte, and "
        "nothing appears outside the output folder and the spool: not in the decoy HOME, TMPDIR, "
        "the XDG folders or the converter's own package.",
        added_in=2,
    ),
    Requirement(
        "converter:timezone",
        "issue 14 (contract 2); docs/turns-format.md (time policy)",
        "The output does not depend on the machine's time zone: each case converts to the same "
        "turns under UTC and under UTC+14 (a time without an offset is UTC, never local time); "
        "the kit also writes a JSON-lines case's times without their offsets to have one; an agent "
        "declaring local_time instead has exactly its offset-less times moved by each far-off "
        "zone's offset.",
        added_in=2,
    ),
    Requirement(
        "converter:long-text",
        "issue 14 (contract 2); DESIGN §1 (verbatim)",
        "A text of 70,000 characters (multi-byte, split across 4 KiB boundaries) comes through "
        "verbatim: nothing is cut, elided or re-encoded.",
        added_in=2,
    ),
)

_INSTALLER = (
    Requirement(
        "installer:identity",
        "DESIGN §4",
        "The class declares an id matching [a-z0-9_-]+, a non-empty label and contract_version 2, "
        "implements every abstract method and can be built without arguments.",
    ),
    Requirement(
        "installer:missing-config",
        "behaviour §8.3; DESIGN §4",
        "install() works when the agent has no config yet (creates what it needs) and status() "
        "then reports wired.",
    ),
    Requirement(
        "installer:idempotent",
        "DESIGN §4",
        "A second install() with the same context changes no byte anywhere and reports changed=False.",
    ),
    Requirement(
        "installer:preserves-config",
        "DESIGN §4; plugin-host practices §9",
        "install() keeps every line of the user's existing config and every unrelated file byte-for-byte.",
    ),
    Requirement(
        "installer:remove-restores",
        "DESIGN §4",
        "uninstall() after install() restores every file to its bytes before install (files "
        "install created are deleted): it removes exactly what it added.",
    ),
    Requirement(
        "installer:remove-idempotent",
        "DESIGN §4",
        "uninstall() when nothing is installed, or twice, changes nothing and reports changed=False.",
    ),
    Requirement(
        "installer:status",
        "funes integrations list",
        "status() reports not wired before install, wired after, not wired after uninstall.",
    ),
    Requirement(
        "installer:refresh",
        "behaviour §8.2 (re-runs refresh)",
        "While the hook records another funes command, status() does not report wired; installing "
        "again replaces funes' hook (no duplicate), and uninstall() then still restores the original "
        "config exactly.",
    ),
    Requirement(
        "installer:malformed-config",
        "plugin-host practices §9",
        "A malformed agent config makes install() and uninstall() raise ConfigError naming the "
        "file, leaves it untouched, and status() reports broken instead of raising.",
    ),
    Requirement(
        "installer:context-home",
        "DESIGN §4 (InstallContext)",
        "install() and uninstall() touch only the HOME and FUNES_HOME of the context, never the "
        "process's own ~.",
    ),
)

_INSTALLER_V2 = tuple(
    Requirement(
        f"installer:{name}",
        "issue 13 item 6; issue 14 (contract 2)",
        behaviour,
        added_in=2,
    )
    for name, behaviour in (
        (
            "remove-restores-empty",
            "A config file that existed before install, even empty ({} or no member at all), is "
            "restored byte for byte by uninstall, never deleted.",
        ),
        (
            "refuses-read-only",
            "A read-only config file is refused with a ConfigError naming the file and saying why; "
            "nothing is written.",
        ),
        (
            "refuses-dangling-link",
            "A config path that is a symbolic link to nothing is refused with a ConfigError saying so; "
            "no folder or stub is created and the link stays.",
        ),
        (
            "fuzz-restores",
            "For random valid documents of the config's format, install then uninstall restores the "
            "bytes exactly, or install refuses with a ConfigError and leaves the file untouched.",
        ),
    )
)

_REGISTRAR = (
    Requirement(
        "registrar:identity",
        "DESIGN §4",
        "The class declares an id matching [a-z0-9_-]+, a non-empty label and contract_version 2, "
        "implements every abstract method and can be built without arguments.",
    ),
    Requirement(
        "registrar:missing-config",
        "behaviour §8.3; DESIGN §4",
        "register() works when the agent has no config yet, and status() then reports wired.",
    ),
    Requirement(
        "registrar:records-command",
        "behaviour §8.4",
        "After register(), registered_command() reads back exactly the context's funes mcp "
        "command, and None before register() and after unregister().",
    ),
    Requirement(
        "registrar:records-memory",
        "behaviour §8.2 (the record stores the bound memory)",
        "A bound memory is recorded as `funes mcp MEMORY` (and status() under another memory does not "
        "report wired); registering again without it rebinds to the local memory without leaving a "
        "second entry.",
    ),
    Requirement(
        "registrar:idempotent",
        "DESIGN §4",
        "A second register() with the same context changes no byte anywhere and reports changed=False.",
    ),
    Requirement(
        "registrar:preserves-config",
        "DESIGN §4",
        "register() keeps every line of the user's existing config (other MCP servers included) "
        "and every unrelated file byte-for-byte.",
    ),
    Requirement(
        "registrar:remove-restores",
        "DESIGN §4",
        "unregister() after register() restores every file to its bytes before register().",
    ),
    Requirement(
        "registrar:remove-idempotent",
        "DESIGN §4",
        "unregister() when nothing is registered, or twice, changes nothing and reports changed=False.",
    ),
    Requirement(
        "registrar:status",
        "funes integrations list",
        "status() reports not wired before register(), wired after, not wired after unregister().",
    ),
    Requirement(
        "registrar:malformed-config",
        "plugin-host practices §9",
        "A malformed agent config makes register() and unregister() raise ConfigError naming the "
        "file, leaves it untouched, and status() reports broken instead of raising.",
    ),
    Requirement(
        "registrar:context-home",
        "DESIGN §4 (InstallContext)",
        "register() and unregister() touch only the HOME and FUNES_HOME of the context, never the "
        "process's own ~.",
    ),
    Requirement(
        "registrar:mcp-tools-list",
        "behaviour §7, §8.4",
        "The registered command really starts an MCP server over stdio that completes the "
        "handshake and answers tools/list with funes' tools (recall among them).",
    ),
)

_HOOK = (
    Requirement(
        "hook:event",
        "behaviour §8.2; issue 28 item 3",
        "The per-turn hook reads the agent's event from stdin and starts `funes integrations convert "
        "ID SOURCE ... --index` for the transcript that event names (not another session, however "
        "recent).",
        added_in=2,
    ),
    Requirement(
        "hook:spool",
        "behaviour §8.1, §8.2; issue 28 item 3",
        "The conversion the hook starts runs with the FUNES_HOME and funes command recorded at "
        "install and writes the event's session into $FUNES_HOME/spool/<id>/, exactly as the "
        "converter converts it.",
        added_in=2,
    ),
    Requirement(
        "hook:indexer",
        "behaviour §8.2 (the agent is never held up); issue 28 item 3",
        "The hook asks for the indexer (--index) and starts its worker detached: it returns while "
        "the worker is still running.",
        added_in=2,
    ),
    Requirement(
        "hook:quiet",
        "behaviour §8.2 (Codex reads a Stop hook's output as a decision); issue 28 item 3",
        "For an event, an empty stdin and garbage alike, the hook exits 0 and prints nothing on "
        "stdout or stderr.",
        added_in=2,
    ),
)

_LOCATION = (
    Requirement(
        "location:env",
        "issue 19 (real setups); issue 28 item 3",
        "With the agent's folder moved out of HOME and the location variable it declares "
        "(CLAUDE_CONFIG_DIR, CODEX_HOME, ...) naming the new place, discover() finds the same "
        "sessions there.",
        added_in=2,
    ),
    Requirement(
        "location:every-session",
        "behaviour §8.3; issue 28 item 3 (archived sessions)",
        "discover() finds every session the fixture HOME holds: each file under it that "
        "sessions_in() reads as a session (archived ones included).",
        added_in=2,
    ),
    Requirement(
        "location:hook",
        "issue 19 (real setups); issue 28 item 3",
        "Run with the agent's folder moved and its location variable set, the hook's locate() "
        "finds the event's transcript in the new place.",
        added_in=2,
    ),
)

_EMBEDDER = (
    Requirement(
        "embedder:identity",
        "issue 16; plugin-host practices §4",
        "The class declares an id matching [a-z0-9_-]+, a non-empty label and model contract version 1, "
        "and models() lists the model under test once, with a positive dimension.",
    ),
    Requirement(
        "embedder:stamp",
        "DESIGN §5 (model stamp)",
        "An instance says its model name and dimension (stamp) without loading weights, exactly as "
        "models() lists them.",
    ),
    Requirement(
        "embedder:dimension",
        "DESIGN §5",
        "Every document and query vector is float32, of the stamped dimension and of unit length; "
        "an empty batch gives no vectors.",
    ),
    Requirement(
        "embedder:determinism",
        "DESIGN §1 (no LLM in ingest: same input, same rows)",
        "The same text gives the same vector, from this instance or a new one.",
    ),
    Requirement(
        "embedder:batch-equals-single",
        "issue 16",
        "A text embedded in a batch gets the vector it gets alone (within float noise).",
    ),
)

_RERANKER = (
    Requirement(
        "reranker:identity",
        "issue 16; plugin-host practices §4",
        "The class declares an id matching [a-z0-9_-]+, a non-empty label and model contract version 1, "
        "and models() lists the model under test.",
    ),
    Requirement(
        "reranker:scores",
        "issue 16",
        "score() gives one float per passage, in the passages' order, whatever that order is; none for "
        "no passages.",
    ),
    Requirement(
        "reranker:determinism",
        "issue 16",
        "A (query, passage) pair gets the same score alone or in a batch.",
    ),
)

#: Every requirement by id, in the order the docs list them.
_REGISTRAR_V2 = tuple(
    Requirement(
        r.id.replace("installer:", "registrar:"),
        r.source,
        r.behaviour.replace("uninstall", "unregister").replace("install", "register"),
        added_in=2,
    )
    for r in _INSTALLER_V2
)

REQUIREMENTS: dict[str, Requirement] = {
    r.id: r
    for r in (
        *_CONVERTER,
        *_INSTALLER,
        *_INSTALLER_V2,
        *_REGISTRAR,
        *_REGISTRAR_V2,
        *_HOOK,
        *_LOCATION,
        *_EMBEDDER,
        *_RERANKER,
    )
}
#: Roles whose ids this manifest governs (a test marked ``<role>:…`` must name a listed id).
#: Other prefixes (``store:`` for StoreContract) are left to their own suites.
ROLES: tuple[str, ...] = ("converter", "installer", "registrar", "hook", "location", "embedder", "reranker")


def get(requirement_id: str) -> Requirement | None:
    return REQUIREMENTS.get(requirement_id)


_ROLE_TITLES = {
    "converter": ("Converter", "ConverterContract"),
    "installer": ("Hook installer", "HookInstallerContract"),
    "registrar": ("Tool registrar", "ToolRegistrarContract"),
    "hook": ("Per-turn hook", "HookInstallerContract"),
    "location": ("Agent locations", "ConverterContract, HookInstallerContract"),
    "embedder": ("Embedder", "EmbedderContract"),
    "reranker": ("Reranker", "RerankerContract"),
}


def render_markdown() -> str:
    """``docs/plugins/requirements.md``: every requirement, grouped by role."""
    out = [
        "<!-- Generated from contracts/funes_contracts/requirements.py; a test keeps them in step. -->",
        "",
        "# Contract requirements",
        "",
        "Every test of the funes-memory-contracts suite checks one of these requirements, and names it with",
        '`@requirement("<id>")`; `funes integrations check <id>` prints one line per requirement.',
        "Ids are stable. A *provisional* requirement is reported as a warning for one release before",
        "it becomes mandatory.",
        "",
    ]
    for role in ROLES:
        title, cls = _ROLE_TITLES[role]
        out += [f"## {title} (`{cls}`)", "", "| id | requirement | source | since |", "|---|---|---|---|"]
        for req in REQUIREMENTS.values():
            if req.role != role:
                continue
            flag = " *(provisional)*" if req.provisional else ""
            out.append(f"| `{req.id}` | {req.behaviour}{flag} | {req.source} | {req.added_in} |")
        out.append("")
    return "\n".join(out)
