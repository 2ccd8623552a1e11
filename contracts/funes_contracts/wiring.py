"""``HookInstallerContract`` and ``ToolRegistrarContract``: what wiring into an agent must guarantee.

Both run the plugin against a throwaway HOME (the ``funes_ctx`` fixture) while the process's own
``HOME`` points at an empty decoy, so a plugin that reads or writes the real ``~`` is caught.
Give the suite a realistic agent config to prove unrelated settings survive::

    class TestEchoHookInstaller(HookInstallerContract):
        installer_cls = EchoHookInstaller
        config_home = FIXTURES / "config-home"   # a HOME holding the agent's config

Without ``config_home`` the byte-preservation tests skip with a reason.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings

from funes_contracts import files
from funes_contracts.converter import assert_identity
from funes_contracts.hookrun import (
    HookWorld,
    find_hook_module,
    isolated_import,
    location_variables,
    moves,
    recorder_command,
    relocate,
)
from funes_core.host.agent import Agent
from funes_core.host.api import (
    Capabilities,
    ConfigError,
    Converter,
    HookInstaller,
    InstallContext,
    IntegrationPart,
    Outcome,
    SessionRef,
    Status,
    ToolRegistrar,
    WiringState,
    spool_filename,
)
from funes_core.turns.format import read_turns_file

__all__ = ["HookInstallerContract", "ToolRegistrarContract", "list_mcp_tools"]

requirement = pytest.mark.requirement

#: Written into every config file the class declares, by the malformed-config tests.
MALFORMED = '{"funes-contract": "this config was cut off mid-write",\n  "unterminated": [\n'
#: Another funes command, to prove a re-install replaces rather than duplicates.
OTHER_COMMAND = ("/opt/another/funes",)
#: Documents that hold nothing, by file suffix: a file the user has, even like this, must survive.
EMPTY_DOCUMENTS = {
    ".json": ["{}", "{}\n", "{\n}\n"],
    ".toml": ["", "\n", "# my settings\n"],
    ".yaml": ["", "{}\n", "# my settings\n"],
    ".yml": ["", "{}\n", "# my settings\n"],
}
#: Examples the config fuzz draws per part (hypothesis); kept small so the suite stays quick.
FUZZ_EXAMPLES = 25


def _world(ctx: InstallContext) -> dict[str, bytes]:
    """Every file the wiring could touch: the context's HOME and FUNES_HOME."""
    snap = {f"~/{k}": v for k, v in files.snapshot(ctx.home).items()}
    snap.update({f"$FUNES_HOME/{k}": v for k, v in files.snapshot(ctx.funes_home).items()})
    return snap


def _diff(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    parts = []
    if added:
        parts.append(f"created {added}")
    if removed:
        parts.append(f"deleted {removed}")
    if changed:
        parts.append(f"changed {changed}")
    return "; ".join(parts) or "no difference"


def _lines_kept(before: bytes, after: bytes) -> list[str]:
    """Lines of ``before`` that no longer appear in ``after`` (ignoring a trailing comma)."""
    kept = {line.strip().rstrip(",") for line in after.decode("utf-8", "replace").splitlines()}
    lost = []
    for line in before.decode("utf-8", "replace").splitlines():
        core = line.strip().rstrip(",")
        if core and core not in kept:
            lost.append(line)
    return lost


async def _list_tools(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.list_tools()
    return [tool.name for tool in result.tools]


def list_mcp_tools(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120) -> list[str]:
    """Start ``argv`` as an MCP stdio server, complete the handshake, return the names from tools/list."""

    import anyio

    async def run() -> list[str]:
        with anyio.fail_after(timeout):
            return await _list_tools(argv, env, cwd)

    return anyio.run(run)


class _WiringContract:
    """The tests both roles share; the two public subclasses name their role and verbs.

    A hook installer and a tool registrar make the same promises about the agent's config
    (idempotent, byte-preserving, exact removal, refusals); only the verbs differ (``install``/
    ``uninstall``, ``register``/``unregister``). So each shared test is written once, here, and
    carries ``@requirement("{role}:…")``: the kit reads ``{role}`` as the subclass's :attr:`role`
    (:func:`funes_contracts.requirements.resolve`), so ``installer:idempotent`` and
    ``registrar:idempotent`` stay two requirements with their own verdicts.
    """

    #: The requirement ids' role (``installer`` or ``registrar``).
    role: ClassVar[str]
    #: The role's base class, and its verbs: the method that wires funes in, and the one that undoes it.
    base: ClassVar[type[IntegrationPart]]
    add_name: ClassVar[str]
    remove_name: ClassVar[str]
    #: A HOME holding the agent's config with unrelated user settings (copied before each test).
    config_home: ClassVar[Path | None] = None
    #: What the malformed-config tests write into each config file.
    malformed_text: ClassVar[str] = MALFORMED
    #: Override the class's own :class:`Capabilities` declaration (rarely needed).
    capabilities: ClassVar[Capabilities | None] = None

    def part_cls(self) -> type[Any]:
        """The class under test (``installer_cls`` or ``registrar_cls``)."""
        raise NotImplementedError

    @pytest.fixture
    def part(self) -> Any:
        return self.part_cls()()

    def _add(self, part: Any, ctx: InstallContext) -> Any:
        return getattr(part, self.add_name)(ctx)

    def _remove(self, part: Any, ctx: InstallContext) -> Any:
        return getattr(part, self.remove_name)(ctx)

    def _seed_home(self, ctx: InstallContext) -> None:
        if self.config_home is None or not Path(self.config_home).is_dir():
            pytest.skip("set config_home to a HOME holding a realistic agent config (unrelated settings)")
        shutil.copytree(Path(self.config_home), ctx.home, dirs_exist_ok=True)

    @staticmethod
    def _other(ctx: InstallContext, **changes: object) -> InstallContext:
        return dataclasses.replace(ctx, **changes)  # type: ignore[arg-type]

    @staticmethod
    def _assert_outcome(outcome: object, *, changed: bool, what: str) -> None:
        assert isinstance(outcome, Outcome), f"{what} must return an Outcome, got {outcome!r}"
        assert outcome.changed is changed, f"{what} reported changed={outcome.changed}, expected {changed}"
        assert outcome.summary.strip(), f"{what} must say what it did (Outcome.summary)"

    # -- the shared requirements ---------------------------------------------------------------

    @requirement("{role}:identity")
    def test_identity(self) -> None:
        assert_identity(self.part_cls(), self.base)

    @requirement("{role}:missing-config")
    def test_missing_config(self, part: Any, funes_ctx: InstallContext) -> None:
        what = f"{self.add_name}() on a fresh HOME"
        self._assert_outcome(self._add(part, funes_ctx), changed=True, what=what)
        assert part.status(funes_ctx).state is WiringState.WIRED

    @requirement("{role}:idempotent")
    def test_idempotent(self, part: Any, funes_ctx: InstallContext) -> None:
        self._add(part, funes_ctx)
        before = _world(funes_ctx)
        what = f"a second {self.add_name}()"
        self._assert_outcome(self._add(part, funes_ctx), changed=False, what=what)
        assert _world(funes_ctx) == before, _diff(before, _world(funes_ctx))

    @requirement("{role}:preserves-config")
    def test_preserves_config(self, part: Any, funes_ctx: InstallContext) -> None:
        self._seed_home(funes_ctx)
        before = _world(funes_ctx)
        self._add(part, funes_ctx)
        after = _world(funes_ctx)
        configs = {f"~/{p.relative_to(funes_ctx.home).as_posix()}" for p in part.config_paths(funes_ctx)}
        verb = f"{self.add_name}()"
        for name, data in before.items():
            assert name in after, f"{verb} deleted {name}"
            if name in configs:
                lost = _lines_kept(data, after[name])
                assert not lost, f"{verb} lost lines of {name}: {lost[:3]}"
            else:
                assert after[name] == data, f"{verb} changed {name}, which is not a config it declares"

    @requirement("{role}:remove-restores")
    def test_remove_restores(self, part: Any, funes_ctx: InstallContext) -> None:
        self._seed_home(funes_ctx)
        before = _world(funes_ctx)
        self._add(part, funes_ctx)
        what = f"{self.remove_name}() after {self.add_name}()"
        self._assert_outcome(self._remove(part, funes_ctx), changed=True, what=what)
        assert _world(funes_ctx) == before, _diff(before, _world(funes_ctx))

    @requirement("{role}:remove-restores")
    def test_remove_restores_fresh_home(self, part: Any, funes_ctx: InstallContext) -> None:
        self._add(part, funes_ctx)
        self._remove(part, funes_ctx)
        assert _world(funes_ctx) == {}, _diff({}, _world(funes_ctx))

    @requirement("{role}:remove-idempotent")
    def test_remove_idempotent(self, part: Any, funes_ctx: InstallContext) -> None:
        what = f"{self.remove_name}() of nothing"
        self._assert_outcome(self._remove(part, funes_ctx), changed=False, what=what)
        assert _world(funes_ctx) == {}, _diff({}, _world(funes_ctx))
        self._add(part, funes_ctx)
        self._remove(part, funes_ctx)
        before = _world(funes_ctx)
        what = f"a second {self.remove_name}()"
        self._assert_outcome(self._remove(part, funes_ctx), changed=False, what=what)
        assert _world(funes_ctx) == before

    @requirement("{role}:status")
    def test_status(self, part: Any, funes_ctx: InstallContext) -> None:
        for step, expected in (
            (None, WiringState.NOT_WIRED),
            (self._add, WiringState.WIRED),
            (self._remove, WiringState.NOT_WIRED),
        ):
            if step is not None:
                step(part, funes_ctx)
            status = part.status(funes_ctx)
            assert isinstance(status, Status) and status.state is expected, f"status() is {status}"

    @requirement("{role}:malformed-config")
    def test_malformed_config(self, part: Any, funes_ctx: InstallContext) -> None:
        written = self._malformed(funes_ctx, part.config_paths(funes_ctx))
        for action in (self._add, self._remove):
            with pytest.raises(ConfigError) as err:
                action(part, funes_ctx)
            assert any(path.name in str(err.value) for path in written), (
                f"the error must name the file: {err.value}"
            )
            for path, data in written.items():
                assert path.read_bytes() == data, f"{path} was changed although it is malformed"
        assert part.status(funes_ctx).state is WiringState.BROKEN

    @requirement("{role}:context-home")
    def test_context_home(self, part: Any, funes_ctx: InstallContext, decoy_home: Path) -> None:
        self._add(part, funes_ctx)
        self._read_back(part, funes_ctx)
        self._remove(part, funes_ctx)
        assert files.snapshot(decoy_home) == {}, f"the {self.role} wrote into the process's own ~"

    def _read_back(self, part: Any, ctx: InstallContext) -> None:
        """Everything that reads the wiring back (the context-home test runs it between add and remove)."""
        part.status(ctx)

    # -- contract 2: the config-edit cases of issue 13 -----------------------------------------

    def empty_documents(self, path: Path) -> list[str]:
        """Documents holding nothing for the config at ``path`` (default: by its suffix)."""
        return EMPTY_DOCUMENTS.get(path.suffix.lower(), [])

    def _paths(self, part: Any, ctx: InstallContext) -> list[Path]:
        paths = list(part.config_paths(ctx))
        if not paths:
            pytest.skip("capability config-file: the part declares no config file (config_paths() is empty)")
        return paths

    @requirement("{role}:remove-restores-empty")
    def test_remove_restores_empty(self, part: Any, funes_ctx: InstallContext) -> None:
        for path in self._paths(part, funes_ctx):
            docs = self.empty_documents(path)
            if not docs:
                pytest.skip(
                    f"capability config-format: the kit knows no empty {path.suffix or 'suffix-less'} "
                    "document; override empty_documents()"
                )
            for doc in docs:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(doc, encoding="utf-8")
                before = _world(funes_ctx)
                self._add(part, funes_ctx)
                self._remove(part, funes_ctx)
                assert path.exists(), f"{path.name} existed as {doc!r} before install and was deleted"
                assert _world(funes_ctx) == before, f"{path.name} as {doc!r}: " + _diff(
                    before, _world(funes_ctx)
                )
                path.unlink()

    @requirement("{role}:refuses-read-only")
    def test_refuses_read_only(self, part: Any, funes_ctx: InstallContext) -> None:
        for path in self._paths(part, funes_ctx):
            docs = self.empty_documents(path) or [""]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(docs[-1], encoding="utf-8")
            path.chmod(0o444)
            before = _world(funes_ctx)
            with pytest.raises(ConfigError) as err:
                self._add(part, funes_ctx)
            assert path.name in str(err.value) and "read-only" in str(err.value), (
                f"the error must name the file and say it is read-only: {err.value}"
            )
            assert _world(funes_ctx) == before, _diff(before, _world(funes_ctx))
            path.chmod(0o644)
            path.unlink()

    @requirement("{role}:refuses-dangling-link")
    def test_refuses_dangling_link(self, part: Any, funes_ctx: InstallContext) -> None:
        for path in self._paths(part, funes_ctx):
            target = funes_ctx.home.parent / "dotfiles-that-are-gone" / path.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(target)
            with pytest.raises(ConfigError) as err:
                self._add(part, funes_ctx)
            assert path.name in str(err.value), f"the error must name the file: {err.value}"
            assert path.is_symlink() and not target.parent.exists(), (
                "a folder or stub was created for the link"
            )
            path.unlink()

    @requirement("{role}:fuzz-restores")
    def test_fuzz_restores(self, decoy_home: Path) -> None:
        from funes_contracts.plugin import FUNES_COMMAND
        from funes_contracts.strategies import config_documents

        cls = self.part_cls()

        def context(root: Path) -> InstallContext:
            home = root / "home"
            home.mkdir(parents=True, exist_ok=True)
            return InstallContext(home=home, funes_home=root / "funes-home", funes_command=FUNES_COMMAND)

        with tempfile.TemporaryDirectory() as tmp:
            learn = context(Path(tmp))
            part = cls()
            self._add(part, learn)
            skeletons: dict[Path, dict[str, Any]] = {}
            for path in part.config_paths(learn):
                rel = path.relative_to(learn.home) if path.is_relative_to(learn.home) else None
                if rel is None or path.suffix.lower() not in EMPTY_DOCUMENTS or not path.is_file():
                    continue
                from funes_core.wiring.configedit.base import Adapter, ConfigFile
                from funes_core.wiring.configedit.json import JsonFormat
                from funes_core.wiring.configedit.toml import TomlFormat
                from funes_core.wiring.configedit.yaml import YamlFormat

                formats: dict[str, Adapter] = {".json": JsonFormat(), ".toml": TomlFormat()}
                fmt = formats.get(path.suffix.lower(), YamlFormat())
                skeletons[rel] = ConfigFile(path, fmt).parse(path.read_text(encoding="utf-8"))
        if not skeletons:
            pytest.skip("capability config-format: no JSON, TOML or YAML config file to fuzz")
        rel, skeleton = sorted(skeletons.items())[0]
        refused: list[str] = []

        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(config_documents(rel.suffix.lower(), skeleton))
        def run(text: str) -> None:
            with tempfile.TemporaryDirectory() as tmp:
                ctx = context(Path(tmp))
                path = ctx.home / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(text.encode("utf-8"))
                before = _world(ctx)
                part = cls()
                try:
                    self._add(part, ctx)
                except ConfigError as exc:
                    refused.append(str(exc))
                    assert path.name in str(exc), f"a refusal must name the file: {exc}"
                    assert _world(ctx) == before, "refused, but changed files: " + _diff(before, _world(ctx))
                    return
                self._remove(part, ctx)
                after = _world(ctx)
                assert after == before, f"not restored for {text!r}: " + _diff(before, after)

        run()

    def _malformed(self, ctx: InstallContext, paths: list[Path]) -> dict[Path, bytes]:
        if not paths:
            pytest.skip("the class declares no config file (config_paths() is empty)")
        written: dict[Path, bytes] = {}
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.malformed_text, encoding="utf-8")
            written[path] = path.read_bytes()
        return written


class HookInstallerContract(_WiringContract):
    """The hook-installer half of the funes plugin contract (``installer:*`` requirements)."""

    role = "installer"
    base = HookInstaller
    add_name, remove_name = "install", "uninstall"
    #: The hook installer class under test (required).
    installer_cls: ClassVar[type[HookInstaller]]
    #: The integration's converter: the hook requirements convert the session an event names with it
    #: (``None``: they skip).
    converter_cls: ClassVar[type[Converter] | None] = None
    #: The converter's fixtures (default: its ``contract_fixtures`` package); the hook runs in its ``home/``.
    fixtures_dir: ClassVar[Path | None] = None
    #: The hook module to run (default: the agent's ``Hooks.module``, else the ``-m MODULE`` install wrote).
    hook_module: ClassVar[str | None] = None

    def part_cls(self) -> type[HookInstaller]:
        return self.installer_cls

    @pytest.fixture
    def installer(self, part: HookInstaller) -> HookInstaller:
        """The installer under test, for a plugin's own tests beside the contract's."""
        return part

    @requirement("installer:refresh")
    def test_refresh(self, installer: HookInstaller, funes_ctx: InstallContext) -> None:
        self._seed_home(funes_ctx)
        before = _world(funes_ctx)
        other = self._other(funes_ctx, funes_command=OTHER_COMMAND)
        installer.install(other)
        assert installer.status(funes_ctx).state is not WiringState.WIRED, (
            "status() must notice that the hook runs another funes command"
        )
        self._assert_outcome(installer.install(funes_ctx), changed=True, what="install() with a new command")
        assert installer.status(funes_ctx).state is WiringState.WIRED
        installer.uninstall(funes_ctx)
        assert _world(funes_ctx) == before, _diff(before, _world(funes_ctx))

    # -- the per-turn hook itself (issue 28) ---------------------------------------------------

    def hook_events(self, ref: SessionRef, home: Path) -> list[dict[str, object]]:
        """The events the agent hands its hook (JSON on stdin) when session ``ref`` has a new turn.

        The default is Claude Code's shape, which Codex, Gemini CLI and others copied, with its
        camelCase twin (GitHub Copilot CLI's). An agent sending something else defines
        ``hook_events(ref, home)`` in its ``contract_fixtures`` package (where ``funes integrations
        check`` finds it); an agent that may leave the transcript's path out returns that event too.
        """
        path, sid = str(ref.path), ref.session_id
        return [
            {
                "hook_event_name": "Stop",
                "session_id": sid,
                "transcript_path": path,
                "cwd": str(home),
                "sessionId": sid,
                "transcriptPath": path,
            }
        ]

    def hook_argv(self, module: str, ctx: InstallContext) -> list[str]:
        """How the agent runs the hook module: what install records (:meth:`InstallContext.hook_argv`).

        A module only PYTHONPATH makes importable (a plugin tested without being installed) is run
        without ``-I``, which would not import it; install itself refuses such a hook. Override only
        to run a hook some other way.
        """
        argv = ctx.hook_argv(module)
        if "-I" in argv and find_spec_here(module) and not isolated_import(module):
            argv.remove("-I")
        return argv

    def _hook_events(self, ref: SessionRef, home: Path) -> list[dict[str, object]]:
        mine = type(self).hook_events
        package = self.converter_cls.contract_fixtures if self.converter_cls is not None else None
        if mine is HookInstallerContract.hook_events and package:
            try:
                found = getattr(importlib.import_module(package), "hook_events", None)
            except ImportError:
                found = None
            if callable(found):
                return list(found(ref, home))
        return self.hook_events(ref, home)

    def _agent(self) -> Agent | None:
        return self.installer_cls.agent or (self.converter_cls.agent if self.converter_cls else None)

    def _fixture_home(self) -> Path:
        from funes_contracts.check import fixtures_of

        if self.converter_cls is None:
            pytest.skip("capability converter: the integration has no converter, so no session for a hook")
        fixtures = self.fixtures_dir if self.fixtures_dir is not None else fixtures_of(self.converter_cls)
        if fixtures is not None and not Path(fixtures).is_dir():
            pytest.fail(f"{type(self).__name__}.fixtures_dir {fixtures} does not exist")
        source = Path(fixtures) / "home" if fixtures is not None else None
        if source is None or not source.is_dir():
            pytest.skip(
                "no home/ folder in the fixtures (a HOME as the agent leaves it): the hook needs a session"
            )
        return source

    def _hook_world(
        self, root: Path, monkeypatch: pytest.MonkeyPatch, move: tuple[str, Path] | None = None
    ) -> HookWorld:
        """The fixture HOME under ``root`` with the hook installed; ``move``: (variable, default path)
        of the agent's folder, which is moved out of HOME and named by that variable."""
        source = self._fixture_home()
        assert self.converter_cls is not None
        home = root / "home"
        shutil.copytree(source, home)
        command, records, gate = recorder_command(root / "recorder")
        ctx = InstallContext(home=home, funes_home=root / "funes-home", funes_command=command)
        before = files.snapshot(home)
        self.installer_cls().install(ctx)
        after = files.snapshot(home)
        written = [data for name, data in after.items() if before.get(name) != data]
        declared = self._agent()
        hooks = declared.hooks if declared is not None else None
        module = self.hook_module or find_hook_module(written, hooks.module if hooks else None)
        if module is None:
            pytest.skip(
                f"capability hook-module: {self.installer_cls.__name__} installs no hook module reading "
                "the agent's event on stdin (the agent runs funes itself)"
            )
        env = dict(os.environ)
        for var in location_variables(declared, self.converter_cls.agent):
            env.pop(var, None)
            monkeypatch.delenv(var, raising=False)
        env["HOME"] = str(home)
        # The agent's environment may name another FUNES_HOME: the one recorded at install wins.
        env["FUNES_HOME"] = str(root / "not-the-recorded-funes-home")
        if move is not None:
            var, default = move
            moved = relocate(home, source, default)
            env[var] = str(moved)
            monkeypatch.setenv(var, str(moved))
        own = os.environ.get("HOME")
        monkeypatch.setenv("HOME", str(home))  # discover() reads the variables for the process's HOME only
        refs = self.converter_cls().discover(home)
        if own is None:
            monkeypatch.delenv("HOME")
        else:
            monkeypatch.setenv("HOME", own)
        if not refs:
            pytest.fail(
                f"discover() found no session in the fixture home{' with $' + move[0] if move else ''}"
            )
        targets = [refs[0], *refs[-1:]] if len(refs) > 1 else refs
        events = [(ref, event) for ref in targets for event in self._hook_events(ref, home)]
        return HookWorld(ctx, home, self.hook_argv(module, ctx), env, records, gate, events)

    @requirement("hook:event")
    def test_hook_reads_the_event(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoy_home: Path
    ) -> None:
        world = self._hook_world(tmp_path, monkeypatch)
        for ref, event in world.events:
            world.worker_for(world.run(json.dumps(event).encode()), ref, event, self.installer_cls.id)

    @requirement("hook:spool")
    def test_hook_writes_the_spool(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoy_home: Path
    ) -> None:
        from funes_core.wiring.spooling import convert_into_spool

        world = self._hook_world(tmp_path, monkeypatch)
        assert self.converter_cls is not None
        converter = self.converter_cls()
        ident = self.installer_cls.id
        for ref, event in world.events:
            worker = world.worker_for(world.run(json.dumps(event).encode()), ref, event, ident)
            recorded = world.ctx.funes_home
            given = Path(worker.funes_home) if worker.funes_home else None
            assert given is not None and given.absolute() == recorded.absolute(), (
                f"the worker runs with FUNES_HOME={worker.funes_home}, not the {recorded} recorded at install"
            )
            ctx = dataclasses.replace(world.ctx, funes_home=given)
            convert_into_spool(
                converter, [Path(s) for s in worker.sources], ctx, sessions=worker.sessions, index=False
            )
            spooled = converter.spool_dir(recorded) / spool_filename(ref.session_id)
            assert spooled.is_file(), f"the worker's conversion wrote no {spooled.name} into the spool"
            expected = converter.convert(ref)
            assert list(read_turns_file(spooled).turns) == expected, (
                f"{spooled.name} does not hold the session's turns as the converter converts it"
            )
            shutil.rmtree(converter.spool_dir(recorded))

    @requirement("hook:indexer")
    def test_hook_starts_the_indexer_detached(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoy_home: Path
    ) -> None:
        world = self._hook_world(tmp_path, monkeypatch)
        for ref, event in world.events:
            worker = world.worker_for(
                world.run(json.dumps(event).encode()), ref, event, self.installer_cls.id
            )
            assert worker.index, (
                "the hook's worker is not asked to index (--index): the turns wait in the spool, "
                f"unsearchable, until the next `funes index` ({worker.argv})"
            )
            assert worker.detached, (
                "the hook's worker is not detached: the hook waited for it, or started it in the agent's "
                "own session, where the agent waits for it or kills it (start it with "
                "funes_core.wiring.hookrt.spawn_detached)"
            )

    @requirement("hook:quiet")
    def test_hook_is_quiet(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoy_home: Path) -> None:
        world = self._hook_world(tmp_path, monkeypatch)
        inputs = [(json.dumps(e).encode(), "an event") for _, e in world.events[:1]]
        inputs += [(b"", "an empty stdin"), (b"\x00{not json", "garbage on stdin")]
        for stdin, what in inputs:
            result = world.run(stdin, wait=False)
            tail = result.stderr.strip().splitlines()[-1:] or [""]
            assert result.returncode == 0, f"for {what} the hook exited {result.returncode}: {tail[0][:300]}"
            assert result.stdout == "", (
                f"for {what} the hook printed {result.stdout[:200]!r} on stdout (the agent reads it)"
            )
            assert result.stderr == "", f"for {what} the hook printed {result.stderr[:200]!r} on stderr"

    @requirement("location:hook")
    def test_hook_follows_the_location_variables(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        agent = self._agent()
        if agent is None or not any(loc.env for loc in agent.locations):
            pytest.skip("capability location-env: the agent declares no location a variable moves")
        found = moves(agent, self._fixture_home())
        if not found:
            pytest.skip("the fixture home holds none of the folders the agent's location variables move")
        for number, (_, var, default) in enumerate(found):
            world = self._hook_world(tmp_path / f"moved-{number}", monkeypatch, move=(var, default))
            where = f" (with ${var}={world.env[var]})"
            for ref, event in world.events:
                world.worker_for(
                    world.run(json.dumps(event).encode()), ref, event, self.installer_cls.id, where
                )


def find_spec_here(module: str) -> bool:
    """Whether this process can import ``module`` (by its ``sys.path``, PYTHONPATH included)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def path_without(program: str, path: str) -> str:
    """``path`` (a PATH value) without the folders that hold an executable named ``program``."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if d and not shutil.which(program, path=d))


class ToolRegistrarContract(_WiringContract):
    """The tool-registrar half of the funes plugin contract (``registrar:*`` requirements)."""

    role = "registrar"
    base = ToolRegistrar
    add_name, remove_name = "register", "unregister"
    #: The tool registrar class under test (required).
    registrar_cls: ClassVar[type[ToolRegistrar]]

    def part_cls(self) -> type[ToolRegistrar]:
        return self.registrar_cls

    @pytest.fixture
    def registrar(self, part: ToolRegistrar) -> ToolRegistrar:
        """The registrar under test, for a plugin's own tests beside the contract's."""
        return part

    @pytest.fixture(autouse=True)
    def _agent_cli_off_path(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Take the registrar's agent CLI off PATH: the suite checks the config-file path.

        The real CLI rewrites files of its own (backups, caches), so byte-for-byte checks are
        only meaningful for what the plugin itself writes. The CLI path belongs to the plugin's
        end-to-end test against the real agent.
        """
        program = self.registrar_cls.agent_cli
        if program:
            monkeypatch.setenv("PATH", path_without(program, os.environ.get("PATH", "")))

    @pytest.fixture
    def caps(self) -> Capabilities:
        return self.capabilities or self.registrar_cls.capabilities

    def _read_back(self, part: Any, ctx: InstallContext) -> None:
        part.registered_command(ctx)
        part.status(ctx)

    @requirement("registrar:records-command")
    def test_records_command(self, registrar: ToolRegistrar, funes_ctx: InstallContext) -> None:
        assert registrar.registered_command(funes_ctx) is None
        registrar.register(funes_ctx)
        assert registrar.registered_command(funes_ctx) == funes_ctx.mcp_command()
        registrar.unregister(funes_ctx)
        assert registrar.registered_command(funes_ctx) is None

    @requirement("registrar:records-memory")
    def test_records_memory(
        self, registrar: ToolRegistrar, funes_ctx: InstallContext, caps: Capabilities
    ) -> None:
        if not caps.memory_binding:
            pytest.skip("capability memory_binding: the registrar declares it cannot bind a memory")
        bound = self._other(funes_ctx, memory="team/shared-memory")
        registrar.register(bound)
        assert registrar.registered_command(bound) == [*funes_ctx.funes_command, "mcp", "team/shared-memory"]
        assert registrar.status(bound).state is WiringState.WIRED
        assert registrar.status(funes_ctx).state is not WiringState.WIRED, "status() must notice the memory"
        registrar.register(funes_ctx)
        assert registrar.registered_command(funes_ctx) == funes_ctx.mcp_command()
        registrar.unregister(funes_ctx)
        assert _world(funes_ctx) == {}, "re-binding left a second entry behind: " + _diff(
            {}, _world(funes_ctx)
        )

    @pytest.mark.slow
    @requirement("registrar:mcp-tools-list")
    def test_mcp_tools_list(
        self,
        registrar: ToolRegistrar,
        funes_ctx: InstallContext,
        mcp_probe: Callable[[tuple[str, ...]], str | None],
    ) -> None:
        registrar.register(funes_ctx)
        argv = registrar.registered_command(funes_ctx)
        assert argv, "registered_command() is empty after register()"
        reason = mcp_probe(tuple(argv))
        if reason:
            pytest.skip(reason)
        env = funes_ctx.env()
        env.setdefault("PYTHONIOENCODING", "utf-8")
        tools = list_mcp_tools(argv, env, funes_ctx.home)
        assert tools, "the MCP server listed no tools"
        assert "recall" in tools, f"the MCP server does not offer recall (tools: {tools})"
