"""Providers from configuration: `provider:model-id` -> Provider, checked early.

Building a provider imports its SDK, the slowest step of start-up, so the first one of a
session is built on a worker thread (`PrebuiltProvider`) while the rest is assembled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom.core.errors import SetupError

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.llm.base import Provider
    from loom.session.assembly.plugins import Plugin


def provider_factory(config: LoomConfig) -> Callable[[str], Provider]:
    """A function from `provider:model-id` to a Provider, using [providers.*] settings."""

    def build(model: str) -> Provider:
        from loom.config import PluginProviderSettings
        from loom.llm.registry import create_provider, parse_model_name

        register_plugin_providers()
        name, _model_id = parse_model_name(model)
        settings = config.providers.for_provider(name)
        options = settings.options if isinstance(settings, PluginProviderSettings) else {}
        api = None if isinstance(settings, PluginProviderSettings) else settings.api
        return create_provider(
            name, api_key=settings.api_key, base_url=settings.base_url, options=options, api=api
        )

    return build


def check_model(model: str, factory: Callable[[str], Any]) -> None:
    """Fail early, in one line, on a malformed name, unknown provider or missing key."""
    from loom.llm.base import LlmError

    try:
        factory(model)
    except (LlmError, ValueError) as exc:
        raise SetupError(str(exc)) from exc


class PrebuiltProvider:
    """A provider factory whose first provider is built on a worker thread, started at
    once; `wait()` joins it and turns a configuration problem into SetupError."""

    def __init__(self, factory: Callable[[str], Any], model: str) -> None:
        self.factory = factory
        self.model = model
        self._provider: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, name="loom-provider", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._provider = self.factory(self.model)
        except BaseException as exc:  # re-raised in the caller's thread by wait()
            self._error = exc

    def wait(self) -> Any:
        from loom.llm.base import LlmError

        self._thread.join()
        if isinstance(self._error, LlmError | ValueError):
            raise SetupError(str(self._error)) from self._error
        if self._error is not None:
            raise self._error
        return self._provider

    def __call__(self, model: str) -> Any:
        if model == self.model:
            return self.wait()
        return self.factory(model)


_plugins_registered = False


def register_plugin_providers() -> None:
    """Make the `loom.providers` entry points known to the model registry, once per
    process; each is imported only when a model name uses it. A plugin cannot replace a
    built-in provider, and one that fails to load says so when it is used."""
    global _plugins_registered
    if _plugins_registered:
        return
    _plugins_registered = True
    from loom.llm.registry import provider_names, register_provider
    from loom.session.assembly.plugins import discover

    known = set(provider_names())
    for plugin in discover("loom.providers"):
        if plugin.name not in known:
            register_provider(plugin.name, _lazy_factory(plugin))


def _lazy_factory(plugin: Plugin) -> Callable[..., Provider]:
    def build(**settings: Any) -> Provider:
        from loom.llm.registry import ModelConfigError
        from loom.session.assembly.plugins import load

        factory = load(plugin)
        if factory is None:
            raise ModelConfigError(
                f"the provider plugin {plugin.name!r} ({plugin.source}) is broken: "
                f"{plugin.error}; fix or uninstall it (`loom plugins` lists plugins)"
            )
        problem = unknown_settings(plugin, factory, settings)
        if problem:
            raise ModelConfigError(problem, provider=plugin.name)
        return factory(**settings)

    return build


# what Loom itself passes every provider factory (llm.registry.create_provider)
_ALWAYS_PASSED = ("api_key", "base_url", "timeout")


def unknown_settings(plugin: Plugin, factory: Callable[..., Any], settings: dict[str, Any]) -> str:
    """Why `factory` cannot take `settings` (its `[providers.NAME]` keys), or "": each
    key must be one of its keyword parameters, unless it takes `**kwargs`."""
    import inspect

    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): let it answer
        return ""
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return ""
    named = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    unknown = [key for key in settings if key not in named and key not in _ALWAYS_PASSED]
    if not unknown:
        return ""
    takes = [name for name in named if name not in _ALWAYS_PASSED]
    return (
        f"[providers.{plugin.name}] sets {', '.join(map(repr, unknown))}, which the provider "
        f"plugin {plugin.name!r} ({plugin.source}) does not take; it takes "
        + ", ".join(["api_key", "base_url", *takes])
        + ". Fix or remove the key in your config."
    )
