"""The small abstract bases a funes plugin subclasses, and the values they exchange with the core.

An *integration* teaches funes about one agent (Claude Code, Codex, ...). It is made of up to three
parts, each a class registered through one hook (see :mod:`funes_core.host.hookspecs`):

* a :class:`Converter` finds the agent's sessions on this machine and converts one into turns;
* a :class:`HookInstaller` wires the per-turn automation into the agent's own config;
* a :class:`ToolRegistrar` registers ``funes mcp [MEMORY]`` as an MCP server with the agent.

All three share an ``id`` (the harness id, ``[a-z0-9_-]+``), a human ``label``, an explicit
``contract_version`` and a :class:`Capabilities` declaration. The host validates these before it
runs anything, so a plugin written for another contract is refused instead of half working.

Nothing here reads the real ``~``: every method that touches the machine receives the HOME (or
an :class:`InstallContext` carrying it), which is what lets the contract suite run a plugin
against a throwaway HOME. This module is imported on every ``funes`` start, so it stays light.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from funes_core import portable
from funes_core.files import missing_dirs
from funes_core.home import resolve_funes_home
from funes_core.host.agent import CONTRACT_VERSION, SUPPORTED_CONTRACTS, Agent, Capabilities
from funes_core.turns.format import Turn, turns_to_jsonl, write_turns_file

__all__ = [
    "CONTRACT_VERSION",
    "ID_PATTERN",
    "SPOOL_SUFFIX",
    "SUPPORTED_CONTRACTS",
    "Agent",
    "Capabilities",
    "ConfigError",
    "Converter",
    "HookInstaller",
    "InstallContext",
    "IntegrationError",
    "IntegrationPart",
    "Outcome",
    "SessionRef",
    "SpoolWrite",
    "Status",
    "ToolRegistrar",
    "WiringState",
    "installed_funes_command",
    "last_activity",
    "spool_filename",
]

#: What an integration id (the harness id) must look like; it names the spool folder too.
ID_PATTERN = re.compile(r"^[a-z0-9_-]+$")
#: The suffix of a turns file in a spool or an output folder.
SPOOL_SUFFIX = ".funes.jsonl"

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


class IntegrationError(Exception):
    """A failure an integration reports to the user as one clear line.

    Raise it (or :class:`ConfigError`) rather than letting a parser's exception escape: funes
    prints ``str(err)`` and exits 1, and the contract suite checks that a malformed agent config
    produces exactly this, with the file left untouched.
    """


class ConfigError(IntegrationError):
    """An agent config file that cannot be read or safely edited; names the file."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A native transcript the converter found: which session, where, and when it was last active.

    One file usually holds one session; an agent that keeps many sessions in one database hands
    out one ref per session with the same ``path``.
    """

    session_id: str
    path: Path
    #: Epoch seconds of the last activity (usually the file's mtime); sorts ``discover`` output.
    last_activity: float


@dataclass(frozen=True, slots=True)
class SpoolWrite:
    """One turns file a converter wrote (or found already up to date)."""

    session_id: str
    path: Path
    turns: int
    #: ``False`` when the file already held exactly these bytes (a re-run changes nothing).
    changed: bool


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an install/uninstall/register/unregister call did, in one line for the user.

    ``changed`` is ``False`` when the call found everything already as asked: that is how
    ``funes integrations install`` proves it is idempotent, and what the contract suite checks.
    """

    changed: bool
    summary: str


class WiringState(StrEnum):
    """Where an installer's hooks or a registrar's MCP entry stand in the agent's config."""

    WIRED = "wired"
    NOT_WIRED = "not wired"
    #: Present, but recording another funes command or memory; installing again refreshes it.
    OUTDATED = "outdated"
    #: The agent config cannot be read (malformed); ``detail`` says which file and why.
    BROKEN = "broken"


@dataclass(frozen=True, slots=True)
class Status:
    """A :class:`WiringState` and a short human detail (which file, which command)."""

    state: WiringState
    detail: str = ""


def installed_funes_command(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The command an agent should run to reach *this* funes, as an argv list.

    ``FUNES_BIN`` wins (the user's pin). Otherwise the ``funes`` script installed next to the
    running interpreter, recorded by absolute path so the agent finds it without our PATH;
    failing that, ``python -m funes_core`` with the same interpreter.
    """
    pinned = environ.get("FUNES_BIN", "").strip()
    if pinned:
        return tuple(shlex.split(pinned))
    script = Path(sys.executable).parent / ("funes.exe" if os.name == "nt" else "funes")
    if script.is_file():
        return (str(script),)
    return (sys.executable, "-m", "funes_core")


@dataclass(frozen=True, slots=True)
class InstallContext:
    """Everything an installer or registrar needs to know about *this* installation.

    Passed to every wiring call so no plugin reads the real ``~`` or guesses where funes lives:
    tests hand it a throwaway HOME and FUNES_HOME, and the user's pin (``FUNES_BIN``) reaches the
    agent's config through ``funes_command``.
    """

    #: The user's home: where the agent keeps its config and transcripts.
    home: Path
    #: funes' state folder (``$FUNES_HOME``, default ``~/.funes``): the memory and the spool.
    funes_home: Path
    #: The command to record in the agent's config to run funes, as an argv list.
    funes_command: tuple[str, ...]
    #: The memory the agent's tools read (``None``: the default local memory).
    memory: str | None = None
    #: Extra environment for subprocesses a plugin runs (an agent CLI); merged over ``os.environ``.
    extra_env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.funes_command:
            raise ValueError("funes_command must name a program")

    @classmethod
    def from_environment(
        cls, *, memory: str | None = None, environ: Mapping[str, str] | None = None
    ) -> InstallContext:
        """The context of the running process: ``HOME``, ``FUNES_HOME``, ``FUNES_BIN``."""
        env = os.environ if environ is None else environ
        own = portable.user_home(env)
        home = Path(own) if own else Path.home()
        funes_home = resolve_funes_home(env)
        return cls(
            home=home.expanduser().absolute(),
            funes_home=funes_home.expanduser().absolute(),
            funes_command=installed_funes_command(env),
            memory=memory,
        )

    def mcp_command(self) -> list[str]:
        """``funes mcp [MEMORY]``: what a registrar records with the agent."""
        return [*self.funes_command, "mcp", *([self.memory] if self.memory else [])]

    def hook_argv(self, module: str) -> list[str]:
        """``python -I -m MODULE --funes-home DIR -- FUNES...``: what an agent runs after each turn.

        This interpreter (the one funes and the plugin are installed in) runs the plugin's hook
        module, which builds on :mod:`funes_core.wiring.hookrt` and so imports the standard library
        only; ``-I`` keeps the agent's project (its folder, its ``PYTHONPATH``) out of the hook's
        imports. FUNES_HOME and the funes command are recorded because the agent's environment
        may not say them.
        """
        return [
            sys.executable,
            "-I",
            "-m",
            module,
            "--funes-home",
            str(self.funes_home),
            "--",
            *self.funes_command,
        ]

    def index_command(self, harness: str) -> list[str]:
        """``funes index --harness ID``: one budgeted step over that integration's spool."""
        return [*self.funes_command, "index", "--harness", harness]

    def convert_command(self, harness: str, source: str) -> list[str]:
        """What a per-turn hook runs: convert ``source`` into the spool, then index in the background.

        ``source`` is usually a placeholder the agent fills in (the transcript path); the command
        returns as soon as the turns file is written, so the agent is never held up by indexing.
        """
        return [
            *self.funes_command,
            "integrations",
            "convert",
            harness,
            source,
            str(self.spool_dir(harness)),
            "--index",
        ]

    def spool_dir(self, harness: str) -> Path:
        """``$FUNES_HOME/spool/<id>``: where converted sessions wait to be indexed."""
        return self.funes_home / "spool" / harness

    def env(self) -> dict[str, str]:
        """The environment for an agent CLI run on this context's behalf (HOME and FUNES_HOME set)."""
        out = dict(os.environ)
        out.update(self.extra_env)
        out["HOME"] = str(self.home)
        out["FUNES_HOME"] = str(self.funes_home)
        return out


class IntegrationPart(ABC):
    """What every class a plugin registers has in common: who it is and which contract it speaks.

    Declare the identity once, as an :class:`Agent`, and name it in every part's class
    statement: ``class EchoConverter(Converter, agent=ECHO)``. That sets :attr:`agent` and copies
    its ``id``, ``label``, ``contract_version`` and ``capabilities`` onto the class, which is what
    the host validates. (Contract-1 plugins set the four attributes by hand; that still works.)
    """

    #: The harness id, ``[a-z0-9_-]+``; the same for every part of one integration.
    id: ClassVar[str]
    #: The agent's human name, e.g. ``"Claude Code"``.
    label: ClassVar[str]
    #: The plugin contract the class was written for. Declare it explicitly (no default): a class
    #: inheriting the host's number would silently claim a contract it was never written for.
    contract_version: ClassVar[int]
    #: What the integration supports; the contract suite skips what is declared absent.
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: The integration's identity and the agent's places (``None`` on contract-1 classes).
    agent: ClassVar[Agent | None] = None

    def __init_subclass__(cls, agent: Agent | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if agent is not None:
            cls.agent = agent
            cls.id = agent.id
            cls.label = agent.label
            cls.contract_version = agent.contract_version
            cls.capabilities = agent.capabilities

    def where(self, name: str, at: InstallContext | Path) -> Path:
        """The path of the agent's location ``name`` for a context or a HOME (:meth:`Agent.locate`)."""
        if self.agent is None:
            raise LookupError(f"{type(self).__name__} declares no Agent, so no location {name!r}")
        if isinstance(at, InstallContext):
            return self.agent.path(name, at.home, at.extra_env)
        return self.agent.path(name, at)


def spool_filename(session_id: str) -> str:
    """The turns-file name for a session: ``<session_id>.funes.jsonl``.

    A session id that is not a safe file name (a path separator, a leading dot, very long) is
    slugged and suffixed with a short hash, so two different ids can never share a file.
    """
    if _SAFE_NAME.fullmatch(session_id):
        return session_id + SPOOL_SUFFIX
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", session_id).strip(".-")[:80] or "session"
    digest = hashlib.sha1(session_id.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()
    return f"{slug}-{digest[:12]}{SPOOL_SUFFIX}"


def last_activity(turns: Iterable[Turn]) -> float | None:
    """Epoch seconds of the newest ``ts`` among ``turns`` (``None`` for no turns)."""
    newest: float | None = None
    for turn in turns:
        try:
            moment = datetime.fromisoformat(turn.ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        newest = moment if newest is None else max(newest, moment)
    return newest


def _ensure_dir(path: Path, *, private_root: Path | None) -> None:
    """Create ``path``; folders created at or below ``private_root`` (funes-owned state) are 0700."""
    if path.is_dir():
        return
    for folder in reversed(missing_dirs(path)):
        private = private_root is not None and folder.is_relative_to(private_root)
        folder.mkdir(mode=0o700 if private else 0o777, exist_ok=True)
        if private:
            folder.chmod(0o700)


class Converter(IntegrationPart):
    """Finds an agent's sessions on this machine and converts one into turns.

    Implement three methods: :meth:`session_roots` (where the agent keeps transcripts under a
    HOME), :meth:`sessions_in` (the sessions in one file or folder) and :meth:`convert` (one
    session into turns). Everything else, in particular writing spool files atomically with the
    right name and mtime, is done here so every plugin gets it right the same way.

    ``convert`` must be deterministic, and must give stable ids when a transcript grows: the
    turns of a longer transcript start with exactly the turns (same ``turn_uuid`` and ``seq``)
    of the shorter one. A truncated last record or an unreadable one is skipped, never fatal.
    """

    #: Optional: the dotted name of a package holding sample native sessions and their golden
    #: ``expected.funes.jsonl`` (the contract-suite fixture layout), so that
    #: ``funes integrations check`` can run the golden tests on an installed plugin.
    contract_fixtures: ClassVar[str | None] = None

    @abstractmethod
    def session_roots(self, home: Path) -> list[Path]:
        """Files or folders under ``home`` where the agent keeps its transcripts (may not exist)."""

    @abstractmethod
    def sessions_in(self, path: Path) -> list[SessionRef]:
        """The sessions stored in ``path``: one transcript file, or a folder searched for them.

        Used both by :meth:`discover` and by ``funes integrations convert ID SOURCE OUT_DIR``.
        Returns ``[]`` (never raises) when ``path`` holds no transcript of this agent.
        """

    @abstractmethod
    def convert(self, ref: SessionRef) -> list[Turn]:
        """Convert one session into turns, in order, with ``harness`` set to :attr:`id`."""

    # -- provided -------------------------------------------------------------------------------

    def agent_found(self, home: Path) -> bool:
        """Whether the agent has left any trace under ``home`` (one of its session roots exists)."""
        return any(root.exists() for root in self.session_roots(home))

    def retention(self, home: Path) -> str | None:
        """How long the agent keeps its transcripts under ``home``, in one line (``None``: unknown).

        Override it when the agent deletes or keeps transcripts by a rule (Claude Code's
        ``cleanupPeriodDays``): ``funes integrations install`` says it, and that funes keeps its
        own copy, because once the agent has deleted a transcript the memory holds the only one.
        Read the agent's setting; never raise for a malformed one (say the default instead).
        """
        return None

    @staticmethod
    def transcript_files(path: Path, pattern: str = "*.jsonl") -> list[Path]:
        """The candidate transcripts in ``path``: itself if a file, else its files matching ``pattern``.

        Searched recursively and sorted; funes' own turns files (``*.funes.jsonl``) are left out,
        so pointing a converter at a folder that also holds converted output never feeds that
        output back in.
        """
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = sorted(p for p in path.rglob(pattern) if p.is_file())
        else:
            return []
        return [p for p in found if not p.name.endswith(SPOOL_SUFFIX)]

    def refs_in(
        self, path: Path, identify: Callable[[Path], str | None], pattern: str = "*.jsonl"
    ) -> list[SessionRef]:
        """One :class:`SessionRef` per transcript in ``path`` that ``identify`` names a session id.

        What most ``sessions_in`` are: :meth:`transcript_files`, then ``identify(file)`` (the
        session id, or ``None`` for a file that is not this agent's), dated by the file's mtime;
        a file that vanishes meanwhile is passed over.
        """
        refs: list[SessionRef] = []
        for candidate in self.transcript_files(path, pattern):
            session_id = identify(candidate)
            if session_id is None:
                continue
            try:
                mtime = candidate.stat().st_mtime
            except OSError:
                continue
            refs.append(SessionRef(session_id, candidate, mtime))
        return refs

    def discover(self, home: Path) -> list[SessionRef]:
        """Every session under ``home``, newest first (by last activity, then path, for stability)."""
        seen: set[tuple[Path, str]] = set()
        refs: list[SessionRef] = []
        for root in self.session_roots(home):
            if not root.exists():
                continue
            for ref in self.sessions_in(root):
                key = (ref.path, ref.session_id)
                if key not in seen:
                    seen.add(key)
                    refs.append(ref)
        refs.sort(key=lambda r: (-r.last_activity, str(r.path), r.session_id))
        return refs

    def spool_dir(self, funes_home: Path) -> Path:
        """``$FUNES_HOME/spool/<id>``."""
        return funes_home / "spool" / self.id

    def write_turns(
        self,
        turns: Iterable[Turn],
        out_dir: Path,
        *,
        fallback_mtime: float | None = None,
        private_root: Path | None = None,
    ) -> list[SpoolWrite]:
        """Write ``turns`` into ``out_dir``, one ``<session_id>.funes.jsonl`` per session.

        Each file is written atomically (a temp name not ending in ``.jsonl``, then a rename,
        via :func:`funes_core.turns.format.write_turns_file`) and stamped with the session's last
        activity, so a spool drains the newest sessions first. A file that already holds
        exactly these bytes is left alone (``changed=False``): re-running a seed changes nothing.
        Folders created at or below ``private_root`` (funes' own state) are made 0700.
        """
        by_session: dict[str, list[Turn]] = {}
        for turn in turns:
            by_session.setdefault(turn.session_id, []).append(turn)
        if not by_session:
            return []
        _ensure_dir(out_dir, private_root=private_root)
        written: list[SpoolWrite] = []
        for session_id, items in by_session.items():
            target = out_dir / spool_filename(session_id)
            mtime = last_activity(items)
            if mtime is None:
                mtime = fallback_mtime
            body = turns_to_jsonl(items).encode("utf-8")
            try:
                same = target.read_bytes() == body
            except OSError:
                same = False
            if same:
                if mtime is not None and target.stat().st_mtime != mtime:
                    os.utime(target, (mtime, mtime))
            else:
                write_turns_file(target, items, mtime=mtime)
            written.append(SpoolWrite(session_id, target, len(items), changed=not same))
        return written

    def convert_into(
        self, ref: SessionRef, out_dir: Path, *, private_root: Path | None = None
    ) -> list[SpoolWrite]:
        """Convert one session and write it into ``out_dir`` (see :meth:`write_turns`)."""
        turns = self.convert(ref)
        return self.write_turns(turns, out_dir, fallback_mtime=ref.last_activity, private_root=private_root)

    def write_spool(self, ref: SessionRef, funes_home: Path) -> list[SpoolWrite]:
        """Convert one session into ``$FUNES_HOME/spool/<id>/`` (folders created 0700)."""
        return self.convert_into(ref, self.spool_dir(funes_home), private_root=funes_home)


class _Wiring(IntegrationPart):
    """What installers and registrars share: the config files they touch and a status."""

    @abstractmethod
    def config_paths(self, ctx: InstallContext) -> list[Path]:
        """The agent config files this class may edit (``[]`` if it only drives the agent's CLI).

        The contract suite snapshots them to prove unrelated bytes survive, and corrupts them to
        prove a malformed config gives a clear :class:`ConfigError` and stays untouched.
        """

    @abstractmethod
    def status(self, ctx: InstallContext) -> Status:
        """Where the wiring stands; never raises for a malformed config (``BROKEN`` instead)."""


class HookInstaller(_Wiring):
    """Installs (and removes) the per-turn automation in the agent's own config.

    The installed hook should run :meth:`InstallContext.convert_command` (or an equivalent) so
    each turn lands in the spool and ``funes index --harness ID`` runs detached; the hook itself
    must return in well under a second. ``install`` and ``uninstall`` are idempotent, preserve
    every unrelated byte of the config, remove exactly what they added, cope with a missing
    config (create it) and refuse a malformed one with :class:`ConfigError`, touching nothing.
    """

    @abstractmethod
    def install(self, ctx: InstallContext) -> Outcome:
        """Add (or refresh) funes' hooks; ``changed=False`` when they were already as asked."""

    @abstractmethod
    def uninstall(self, ctx: InstallContext) -> Outcome:
        """Remove exactly what :meth:`install` added; ``changed=False`` when nothing was there."""


class ToolRegistrar(_Wiring):
    """Registers (and unregisters) ``funes mcp [MEMORY]`` as an MCP server with the agent.

    Prefer the agent's own CLI when it has one and fall back to its config file. The same rules
    as :class:`HookInstaller` apply: idempotent, byte-preserving, exact removal, clear errors.
    """

    #: The agent's own program this registrar runs when it is on PATH (e.g. ``"claude"``), or
    #: ``None``. The contract suite checks the config-file path with that program off PATH: an
    #: agent CLI writes its own files (backups, caches) that no byte-for-byte check can predict,
    #: so the CLI path is the plugin's end-to-end test's job.
    agent_cli: ClassVar[str | None] = None
    #: The agent's program that ``funes ask --agent ID`` runs (looked up on PATH), or ``None``
    #: when the agent cannot be borrowed for an answer. Setting it promises :meth:`ask_argv`.
    ask_cli: ClassVar[str | None] = None

    def ask_argv(self, program: str, ctx: InstallContext) -> list[str]:
        """The command line that answers the prompt it reads on stdin, once, and exits.

        ``program`` is :attr:`ask_cli` as found on PATH. ``funes ask`` hands the agent recalled
        passages to answer from, so the run must stay outside funes' loop: no MCP server (the
        agent must not recurse into funes), no hooks and nothing persisted (the prompt, which
        quotes the memory, must not come back as a new session), and no tools where the agent
        allows it (the answer comes from the passages). It runs in an empty temporary folder,
        so project instructions and project MCP files are not in play. The prompt travels on
        stdin rather than argv: argv is visible to every user of the machine and has a size cap.
        """
        raise NotImplementedError(f"{type(self).__name__} sets ask_cli but does not implement ask_argv")

    def ask_answer(self, lines: Iterable[str]) -> Iterator[str]:
        """The answer's text in the program's stdout ``lines``, piece by piece as they arrive.

        ``funes ask`` prints each piece at once, so a structured stream (JSON events) should be
        turned into text as it comes, not after the end. The default passes plain text through.
        Raise :class:`IntegrationError` for a failure the program reports in its output.
        """
        yield from lines

    @abstractmethod
    def register(self, ctx: InstallContext) -> Outcome:
        """Register :meth:`InstallContext.mcp_command` with the agent."""

    @abstractmethod
    def unregister(self, ctx: InstallContext) -> Outcome:
        """Remove the registration this class made; never another server's."""

    @abstractmethod
    def registered_command(self, ctx: InstallContext) -> list[str] | None:
        """The argv the agent will run for funes' MCP server, read back from its config.

        ``None`` when not registered. The contract suite starts exactly this command and asks
        it for ``tools/list``, so it must be what the agent really runs.
        """
