"""The plugin manager: finds plugins through entry points, validates what they register, isolates failures.

funes is a CLI that agents depend on, so a broken plugin must never stop it from starting. Three
layers keep it that way:

1. *Load*: our own loop over the ``funes`` entry points (as conda does). A plugin that fails to
   import, or that implements a hook funes does not know (a misspelling), is reported as
   ``funes: skipped plugin <name> from <dist> <version>: <error>`` and skipped.
2. *Validate*: every class a plugin registers is checked (base class, ``id``, ``label``,
   ``contract_version``, not abstract) and an id claimed by two plugins is refused, naming both
   distributions, before anything runs.
3. *Call*: hooks are called one plugin at a time inside a ``try``; a plugin that raises is
   reported with the same line, unregistered, and the others carry on.

We keep our own plugin -> distribution map instead of reading pluggy's private state. Loading is
cheap (no heavy imports, a few milliseconds) because it runs on every ``funes`` start.

Environment: ``FUNES_LOAD_PLUGINS`` (comma list of plugin or distribution names; empty string
loads none), ``FUNES_DISABLED_PLUGINS`` (comma list to block), ``FUNES_TRACE_PLUGINS=1`` (trace
hook calls and print tracebacks of skipped plugins).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import inspect
import os
import re
import sys
import traceback
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, cast

import pluggy

from funes_core.host import hookspecs
from funes_core.host.api import (
    CONTRACT_VERSION,
    ID_PATTERN,
    SUPPORTED_CONTRACTS,
    Converter,
    HookInstaller,
    IntegrationPart,
    ToolRegistrar,
)
from funes_core.host.versions import requirement_problem

if TYPE_CHECKING:
    import typer

__all__ = [
    "ENTRY_POINT_GROUP",
    "ROLES",
    "FunesPluginManager",
    "Integration",
    "PluginError",
    "PluginInfo",
    "load_plugins",
]

#: The entry-point group plugins declare (``[project.entry-points.funes]``).
ENTRY_POINT_GROUP = hookspecs.PROJECT


@dataclass(frozen=True, slots=True)
class _Role:
    name: str
    hook: str
    base: type[IntegrationPart]


#: The three registration hooks, the role each fills and the base its classes must subclass.
ROLES: tuple[_Role, ...] = (
    _Role("converter", "funes_register_converters", Converter),
    _Role("hook installer", "funes_register_hook_installers", HookInstaller),
    _Role("tool registrar", "funes_register_tool_registrars", ToolRegistrar),
)

_REPORT_TAIL = "report this to the plugin author"


@dataclass(frozen=True, slots=True)
class ClassKind:
    """A kind of class plugins register beyond integration parts (embedders, rerankers).

    The room that owns the kind declares it with :meth:`FunesPluginManager.add_class_kind`, so the
    host validates and lists those classes without importing that room: the models room sits above
    the host and tells it what an embedder is, not the other way round.
    """

    #: The hook that returns the classes (``funes_register_embedders``).
    hook: str
    #: The base every class must subclass.
    base: type[Any]
    #: The contract version the classes must declare (``contract_version``).
    contract_version: int
    #: The plugin whose classes rank first (funes' own), or ``""``.
    first: str = ""


class PluginError(Exception):
    """A plugin that cannot be used; the message names the plugin and its distribution."""


class ContractError(PluginError):
    """A plugin written for a plugin contract this funes does not speak (nothing to report: upgrade)."""


def contract_refusal(where: str, version: object) -> str:
    """The line refusing a class of contract ``version``: its contract, the core's, what to upgrade."""
    from funes_core.version import DISTRIBUTION, __version__

    speaks = " or ".join(str(v) for v in sorted(SUPPORTED_CONTRACTS, reverse=True))
    if not isinstance(version, int) or isinstance(version, bool):
        return (
            f"{where} declares no plugin contract (contract_version is {version!r}); "
            f"its author must declare the contract it was written for ({CONTRACT_VERSION} is current)"
        )
    if version > CONTRACT_VERSION:
        hint = f"upgrade {DISTRIBUTION} to a release that speaks contract {version}"
    else:
        hint = f"upgrade the plugin to a release for contract {CONTRACT_VERSION}"
    return (
        f"{where} speaks plugin contract {version}, but {DISTRIBUTION} {__version__} speaks "
        f"contract {speaks}; {hint}"
    )


@dataclass(slots=True)
class PluginInfo:
    """What funes knows about one plugin: where it came from and how loading went."""

    name: str
    dist: str | None = None
    version: str | None = None
    module: str = ""
    #: ``loaded``, ``disabled`` (FUNES_DISABLED_PLUGINS), ``not selected`` (FUNES_LOAD_PLUGINS),
    #: ``skipped`` (failed to import, validate or run) or ``refused`` (name clash).
    status: str = "loaded"
    error: str = ""
    hooks: list[str] = field(default_factory=list)
    #: role name -> ids this plugin registers for it.
    ids: dict[str, list[str]] = field(default_factory=dict)
    #: ids refused because another plugin claims them too.
    conflicts: list[str] = field(default_factory=list)
    #: The contract versions its classes declare (an older one loads, with a deprecation note).
    contracts: set[int] = field(default_factory=set)

    @property
    def deprecated(self) -> str:
        """Why this plugin's contract is deprecated (``""`` when it speaks the current one)."""
        old = sorted(v for v in self.contracts if v != CONTRACT_VERSION)
        if not old:
            return ""
        return (
            f"{self.origin} speaks plugin contract {old[0]}; it keeps working, but contract "
            f"{CONTRACT_VERSION} is current: ask its author for a release checked with "
            "funes-memory-contracts (docs/plugins/contract-2.md)"
        )

    @property
    def origin(self) -> str:
        """``<dist> <version>``, as named in messages."""
        if self.dist is None:
            return "an unknown distribution"
        return f"{self.dist} {self.version}" if self.version else self.dist

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dist": self.dist,
            "version": self.version,
            "module": self.module,
            "status": self.status,
            "error": self.error,
            "hooks": list(self.hooks),
            "ids": {role: list(ids) for role, ids in self.ids.items()},
            "conflicts": list(self.conflicts),
            "contract_version": max(self.contracts) if self.contracts else CONTRACT_VERSION,
            "deprecated": self.deprecated or None,
        }


@dataclass(frozen=True, slots=True)
class Integration:
    """The parts one plugin registered under one id."""

    id: str
    label: str
    plugin: str
    dist: str | None
    version: str | None
    converter: type[Converter] | None = None
    hook_installer: type[HookInstaller] | None = None
    tool_registrar: type[ToolRegistrar] | None = None

    @property
    def origin(self) -> str:
        if self.dist is None:
            return f"plugin {self.plugin}"
        return f"{self.dist} {self.version}" if self.version else self.dist

    def parts(self) -> dict[str, type[IntegrationPart] | None]:
        return {
            "converter": self.converter,
            "hook installer": self.hook_installer,
            "tool registrar": self.tool_registrar,
        }


def _entry_points(
    path: list[str] | None,
) -> list[tuple[importlib.metadata.EntryPoint, importlib.metadata.Distribution | None]]:
    """The ``funes`` entry points with their distributions (first distribution of a name wins).

    Without ``path`` this is ``importlib.metadata.entry_points``, which reads only the small
    ``entry_points.txt`` of each distribution: a couple of milliseconds on every start.
    """
    if path is None:
        return [(ep, ep.dist) for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)]
    out: list[tuple[importlib.metadata.EntryPoint, importlib.metadata.Distribution | None]] = []
    seen: set[str] = set()
    for dist in importlib.metadata.distributions(path=path):
        eps = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
        key = _normalise(dist.metadata["Name"] or "?")
        if not eps or key in seen:
            continue
        seen.add(key)
        out.extend((ep, dist) for ep in eps)
    return out


def _names(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {_normalise(part) for part in value.split(",") if part.strip()}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class FunesPluginManager:
    """funes' plugin manager: a pluggy ``PluginManager`` plus discovery, validation and isolation.

    Build a fresh one per process (or per test); nothing here is global. ``environ`` and
    ``stderr`` are injectable so tests never touch the real environment or terminal.
    """

    def __init__(self, *, environ: Mapping[str, str] | None = None, stderr: TextIO | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self._stderr = stderr
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._objects: dict[str, object] = {}
        self._registry: dict[str, Integration] | None = None
        self._kinds: dict[str, ClassKind] = {}
        self._noted: set[str] = set()
        self._trace = self._environ.get("FUNES_TRACE_PLUGINS", "") not in ("", "0")
        if self._trace:
            self.pm.trace.root.setwriter(self._write)
            self.pm.enable_tracing()

    # -- reporting --------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        stream = self._stderr if self._stderr is not None else sys.stderr
        stream.write(text)
        stream.flush()

    def _report(self, line: str) -> None:
        self._write(f"funes: {line}\n")

    def _skip(self, info: PluginInfo, error: str, exc: BaseException | None = None) -> None:
        """Mark a plugin skipped, unregister it and say so on stderr (the one skip line)."""
        info.status = "skipped"
        info.error = error
        plugin = self._objects.pop(info.name, None)
        if plugin is not None and self.pm.is_registered(plugin):
            self.pm.unregister(plugin)
        self._registry = None
        self._report(f"skipped plugin {info.name} from {info.origin}: {error}")
        if exc is not None and self._trace:
            self._write("".join(traceback.format_exception(exc)))

    # -- loading ----------------------------------------------------------------------------

    def load_entrypoints(self, path: list[str] | None = None) -> None:
        """Load every plugin declared in the ``funes`` entry-point group (once per name).

        ``path`` limits *discovery* to distributions found there (tests); importing still uses
        ``sys.path``. Plugins already known (loaded, skipped or refused) are left alone, so this
        can run again after installing a distribution to pick up only the new plugin.
        """
        load_only = _names(self._environ.get("FUNES_LOAD_PLUGINS"))
        disabled = _names(self._environ.get("FUNES_DISABLED_PLUGINS")) or set()
        found: dict[str, list[tuple[importlib.metadata.EntryPoint, PluginInfo]]] = {}
        dists: dict[str, list[str] | None] = {}
        for ep, dist in _entry_points(path):
            dist_name = (dist.metadata["Name"] or "?") if dist is not None else None
            version = dist.version if dist is not None else None
            info = PluginInfo(name=ep.name, dist=dist_name, version=version, module=ep.value)
            found.setdefault(ep.name, []).append((ep, info))
            dists[ep.name] = dist.requires if dist is not None else None
        for name in sorted(found):
            candidates = found[name]
            if name in self._infos:
                continue
            if len(candidates) > 1:
                both = " and ".join(info.origin for _, info in candidates)
                for _, info in candidates:
                    info.status = "refused"
                    info.error = f"the plugin name {name!r} is provided by {both}"
                self._infos[name] = candidates[0][1]
                self._report(f"refused plugin {name}: provided by {both}; uninstall one of them")
                continue
            ep, info = candidates[0]
            self._infos[name] = info
            requires = dists.get(name)
            keys = {_normalise(name), _normalise(info.dist or "")}
            if load_only is not None and not keys & load_only:
                info.status = "not selected"
                continue
            if keys & disabled:
                info.status = "disabled"
                self.pm.set_blocked(name)
                continue
            # Before importing it: a plugin made for another core would fail with a bare ImportError.
            problem = requirement_problem(requires, info.dist or "the plugin")
            if problem:
                self._skip(info, problem)
                continue
            try:
                plugin = ep.load()
            # Broad on purpose: this is the isolation boundary; a broken plugin must not stop funes.
            except Exception as exc:
                self._skip(info, _describe(exc), exc)
                continue
            self._register(plugin, info)

    def register(
        self, plugin: object, name: str, *, dist: str | None = None, version: str | None = None
    ) -> bool:
        """Register a plugin object directly (built-ins, tests); ``True`` when it was accepted."""
        if name in self._infos:
            raise PluginError(f"a plugin named {name!r} is already registered")
        module = getattr(plugin, "__name__", repr(plugin))
        info = PluginInfo(name=name, dist=dist, version=version, module=module)
        self._infos[name] = info
        return self._register(plugin, info)

    def _register(self, plugin: object, info: PluginInfo) -> bool:
        try:
            self.pm.register(plugin, name=info.name)
        except pluggy.PluginValidationError as exc:
            self._skip(info, f"{_describe(exc)} ({_REPORT_TAIL})", exc)
            return False
        except ValueError as exc:  # the same object registered twice under two names
            self._skip(info, _describe(exc), exc)
            return False
        self._objects[info.name] = plugin
        unknown = self._unknown_hooks(plugin)
        if unknown:
            self._skip(info, f"{'; '.join(unknown)} ({_REPORT_TAIL})")
            return False
        callers = self.pm.get_hookcallers(plugin) or []
        info.hooks = sorted(c.name for c in callers if c.has_spec())
        self._registry = None
        return True

    def _unknown_hooks(self, plugin: object) -> list[str]:
        """Hook implementations that match no hookspec (usually a typo), as messages.

        This is ``pm.check_pending()`` restricted to one plugin, so a misspelling fails loudly
        and names the plugin instead of silently never being called.
        """
        problems: list[str] = []
        known = sorted(name for name in dir(hookspecs) if name.startswith("funes_"))
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError:
            for caller in self.pm.get_hookcallers(plugin) or []:
                if caller.has_spec():
                    continue
                if any(impl.plugin is plugin and impl.optionalhook for impl in caller.get_hookimpls()):
                    continue
                near = difflib.get_close_matches(caller.name, known, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(f"unknown hook {caller.name!r}{hint}")
        return problems

    # -- introspection ----------------------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every plugin funes found, whatever its status, with the ids it registers."""
        self.integrations()  # fills ids, conflicts and late failures
        for kind in self._kinds:
            self.classes(kind)
        return [self._infos[name] for name in sorted(self._infos)]

    def plugin_info(self, name: str) -> PluginInfo | None:
        return self._infos.get(name)

    def loaded(self) -> list[tuple[str, object]]:
        """(name, plugin) of every plugin still registered, in load order."""
        return list(self._objects.items())

    # -- calling ----------------------------------------------------------------------------

    def _call_each(self, hook_name: str, **kwargs: Any) -> list[tuple[PluginInfo, Any]]:
        """Call one hook plugin by plugin, so a failure is pinned on (and skips) its plugin only."""
        results: list[tuple[PluginInfo, Any]] = []
        for name, plugin in list(self._objects.items()):
            results.extend(self._call_single(name, plugin, hook_name, **kwargs))
        return results

    def _collect(self) -> dict[str, dict[str, list[type[IntegrationPart]]]]:
        """plugin name -> role -> validated classes; skips (whole) plugins that register junk."""
        collected: dict[str, dict[str, list[type[IntegrationPart]]]] = {}
        for role in ROLES:
            for info, returned in self._call_each(role.hook):
                if info.status != "loaded":
                    continue
                try:
                    classes = self._validate(role, returned)
                except ContractError as exc:
                    self._skip(info, str(exc))
                    collected.pop(info.name, None)
                    continue
                except PluginError as exc:
                    self._skip(info, f"{exc} ({_REPORT_TAIL})")
                    collected.pop(info.name, None)
                    continue
                collected.setdefault(info.name, {}).setdefault(role.name, []).extend(classes)
        return {name: roles for name, roles in collected.items() if self._infos[name].status == "loaded"}

    @staticmethod
    def _validate(role: _Role, returned: object) -> list[type[IntegrationPart]]:
        if returned is None:
            return []
        if isinstance(returned, (str, bytes)) or not isinstance(returned, Iterable):
            kind = type(returned).__name__
            raise PluginError(f"{role.hook} must return an iterable of classes, got {kind}")
        out: list[type[IntegrationPart]] = []
        ids: set[str] = set()
        for item in returned:
            if not isinstance(item, type) or not issubclass(item, role.base):
                base = f"funes_core.{role.base.__name__}"
                raise PluginError(f"{role.hook} returned {item!r}, which is not a subclass of {base}")
            where, ident = _identity(item)
            version = getattr(item, "contract_version", None)
            if version not in SUPPORTED_CONTRACTS:
                raise ContractError(contract_refusal(where, version))
            _check_complete(item, where)
            if ident in ids:
                raise PluginError(f"{role.hook} returned two classes with id {ident!r}")
            ids.add(ident)
            out.append(item)
        return out

    def integrations(self) -> dict[str, Integration]:
        """Every usable integration by id, after validation and conflict refusal (cached)."""
        if self._registry is not None:
            return self._registry
        collected = self._collect()
        claimants: dict[str, list[str]] = {}
        for name, roles in collected.items():
            info = self._infos[name]
            info.ids = {role: sorted(c.id for c in classes) for role, classes in roles.items()}
            info.contracts = {c.contract_version for classes in roles.values() for c in classes}
            if info.deprecated and name not in self._noted:
                self._noted.add(name)
                self._report(f"note: {info.deprecated}")
            for ident in sorted({c.id for classes in roles.values() for c in classes}):
                claimants.setdefault(ident, []).append(name)
        registry: dict[str, Integration] = {}
        for ident, names in sorted(claimants.items()):
            if len(names) > 1:
                origins = " and ".join(self._infos[n].origin for n in names)
                for n in names:
                    self._infos[n].conflicts.append(ident)
                self._report(
                    f"refused integration {ident!r}: it is claimed by {origins}; uninstall one of them"
                )
                continue
            name = names[0]
            info = self._infos[name]
            parts: dict[str, type[IntegrationPart]] = {}
            for role, classes in collected[name].items():
                for cls in classes:
                    if cls.id == ident:
                        parts[role] = cls
            label = next(iter(parts.values())).label
            registry[ident] = Integration(
                id=ident,
                label=label,
                plugin=name,
                dist=info.dist,
                version=info.version,
                converter=cast("type[Converter] | None", parts.get("converter")),
                hook_installer=cast("type[HookInstaller] | None", parts.get("hook installer")),
                tool_registrar=cast("type[ToolRegistrar] | None", parts.get("tool registrar")),
            )
        self._registry = registry
        return registry

    def add_class_kind(self, kind: str, declared: ClassKind) -> None:
        """Declare a kind of class plugins register (idempotent); see :class:`ClassKind`."""
        self._kinds.setdefault(kind, declared)

    def classes(self, kind: str) -> list[tuple[type[Any], PluginInfo]]:
        """Validated classes of a declared kind (``"embedder"``, ``"reranker"``), with the plugin of each.

        A plugin whose hook raises or returns something that is not a valid class is skipped
        with the usual line naming it; the others (the kind's ``first`` plugin first) still
        serve. Two classes with the same id are both refused, naming both distributions. A kind
        nobody declared has no classes.
        """
        declared = self._kinds.get(kind)
        if declared is None:
            return []
        hook = declared.hook
        found: list[tuple[type[Any], PluginInfo]] = []
        for info, returned in self._call_each(hook):
            try:
                classes = _validate_classes(hook, declared.base, returned, declared.contract_version)
            except PluginError as exc:
                self._skip(info, f"{exc} ({_REPORT_TAIL})")
                continue
            info.ids[kind] = sorted(c.id for c in classes)
            found.extend((cls, info) for cls in classes)
        claimants: dict[str, list[PluginInfo]] = {}
        for cls, info in found:
            claimants.setdefault(cls.id, []).append(info)
        clashes = {ident for ident, infos in claimants.items() if len({i.name for i in infos}) > 1}
        for ident in sorted(clashes):
            origins = " and ".join(i.origin for i in claimants[ident])
            for i in claimants[ident]:
                if ident not in i.conflicts:
                    i.conflicts.append(ident)
            self._report(f"refused {kind} {ident!r}: it is claimed by {origins}; uninstall one of them")
        builtin_first = sorted(found, key=lambda pair: pair[1].name != declared.first)
        return [(cls, info) for cls, info in builtin_first if cls.id not in clashes]

    def integration(self, ident: str) -> Integration | None:
        return self.integrations().get(ident)

    def register_commands(self, app: typer.Typer) -> None:
        """Let each plugin add its commands; refuse (and skip) one that shadows an existing name."""
        for name, plugin in list(self._objects.items()):
            info = self._infos[name]
            if info.status != "loaded":
                continue
            before = Counter(_command_names(app))
            snapshot = (list(app.registered_commands), list(app.registered_groups))
            self._call_single(name, plugin, "funes_register_commands", app=app)
            if info.status != "loaded":  # it raised: drop whatever it added before failing
                app.registered_commands[:], app.registered_groups[:] = snapshot
                continue
            after = Counter(_command_names(app))
            clashes = sorted(n for n, count in after.items() if count > 1 and count > before.get(n, 0))
            if clashes:
                app.registered_commands[:], app.registered_groups[:] = snapshot
                self._skip(info, f"command {clashes[0]!r} is already taken ({_REPORT_TAIL})")

    def _call_single(
        self, name: str, plugin: object, hook_name: str, **kwargs: Any
    ) -> list[tuple[PluginInfo, Any]]:
        """Call ``hook_name`` on one plugin only; a raise skips the plugin (isolation boundary)."""
        info = self._infos[name]
        if info.status != "loaded":
            return []
        others = [p for n, p in self._objects.items() if n != name]
        caller = self.pm.subset_hook_caller(hook_name, remove_plugins=others)
        if not any(impl.plugin is plugin for impl in caller.get_hookimpls()):
            return []
        try:
            returned = caller(**kwargs)
        # Broad on purpose: this is the isolation boundary; one plugin's bug must not break funes.
        except Exception as exc:
            self._skip(info, f"{hook_name} raised {_describe(exc)} ({_REPORT_TAIL})", exc)
            return []
        return [(info, value) for value in returned]


def _check_class(item: type[Any], version: int, contract: str) -> str:
    """Check a registered class's id, label, contract version and completeness; returns its id."""
    where, ident = _identity(item)
    declared = getattr(item, "contract_version", None)
    if declared != version:
        raise PluginError(
            f"{where} was written for {contract} version {declared!r}, but this funes speaks "
            f"{contract} version {version}; install a release of the plugin for {contract} "
            f"{version} or update funes"
        )
    _check_complete(item, where)
    return ident


def _identity(item: type[Any]) -> tuple[str, str]:
    """(where, id) of a plugin's class, once its ``id`` and ``label`` are checked.

    One rule for every kind of class a plugin registers (integration parts and the kinds other
    rooms declare): two copies of it had already drifted apart.
    """
    where = f"{item.__module__}.{item.__qualname__}"
    ident = getattr(item, "id", None)
    if not isinstance(ident, str) or not ID_PATTERN.fullmatch(ident):
        raise PluginError(f"{where}.id must match [a-z0-9_-]+, got {ident!r}")
    label = getattr(item, "label", None)
    if not isinstance(label, str) or not label.strip():
        raise PluginError(f"{where}.label must be a non-empty string")
    return where, ident


def _check_complete(item: type[Any], where: str) -> None:
    """Refuse a class that leaves an abstract method of its base unimplemented, naming them."""
    if inspect.isabstract(item):
        missing = ", ".join(sorted(getattr(item, "__abstractmethods__", ())))
        raise PluginError(f"{where} does not implement {missing}")


def _validate_classes(hook: str, base: type[Any], returned: object, version: int) -> list[type[Any]]:
    """The classes a model hook returned, checked like integration parts (see ``_check_class``)."""
    if returned is None:
        return []
    if isinstance(returned, (str, bytes)) or not isinstance(returned, Iterable):
        raise PluginError(f"{hook} must return an iterable of classes, got {type(returned).__name__}")
    out: list[type[Any]] = []
    for item in returned:
        if not isinstance(item, type) or not issubclass(item, base):
            raise PluginError(
                f"{hook} returned {item!r}, which is not a subclass of funes_core.{base.__name__}"
            )
        _check_class(item, version, "model contract")
        out.append(item)
    return out


def _command_names(app: typer.Typer) -> list[str]:
    """The top-level names an app answers to (commands and sub-apps), duplicates kept."""
    from typer.models import DefaultPlaceholder

    def resolve(value: object) -> str | None:
        if isinstance(value, DefaultPlaceholder):
            value = value.value
        return value if isinstance(value, str) and value else None

    names: list[str] = []
    for command in app.registered_commands:
        name = resolve(command.name)
        if name is None and command.callback is not None:
            name = command.callback.__name__.lower().replace("_", "-")
        if name:
            names.append(name)
    for group in app.registered_groups:
        name = resolve(group.name)
        if name is None and group.typer_instance is not None:
            name = resolve(group.typer_instance.info.name)
            if name is None and group.typer_instance.registered_callback is not None:
                callback = group.typer_instance.registered_callback.callback
                name = callback.__name__.lower().replace("_", "-") if callback else None
        if name:
            names.append(name)
    return names


def load_plugins(
    *, environ: Mapping[str, str] | None = None, stderr: TextIO | None = None
) -> FunesPluginManager:
    """A manager with every installed plugin loaded (what the ``funes`` console script uses)."""
    manager = FunesPluginManager(environ=environ, stderr=stderr)
    manager.load_entrypoints()
    return manager
