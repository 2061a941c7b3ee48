"""Model names (`provider:model-id`) and building a Provider with its key and endpoint.

Keys and endpoints come from explicit arguments (config, flags) first, then the
environment variables users of each SDK already set, as each provider's declaration
(`loom.providers`) lists them (`key_vars`, `token_vars`, `base_url_vars`).

The adapters (and their SDKs) are imported only when a provider is created, so
importing this module stays cheap. Extra providers (e.g. the scripted test provider)
can be added with `register_provider`.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping

from loom.llm.base import LlmError, Provider
from loom.providers import BUILTIN, declaration

DEFAULT_TIMEOUT = 600.0  # seconds; a long answer streams for minutes


class ModelConfigError(LlmError, ValueError):
    """A model name or provider setting is wrong; retrying will not help."""

    def __init__(self, message: str, *, provider: str | None = None) -> None:
        super().__init__(message, transient=False, provider=provider)


_CUSTOM: dict[str, Callable[..., Provider]] = {}


def provider_names() -> list[str]:
    """Every provider name `parse_model_name` accepts (aliases excluded)."""
    return sorted({*(d.name for d in BUILTIN), *_CUSTOM})


def register_provider(name: str, factory: Callable[..., Provider]) -> None:
    """Add a provider; `factory(api_key=, base_url=, timeout=, **options)` builds it
    (`options`: the rest of its `[providers.NAME]` table)."""
    _CUSTOM[name] = factory


def _known_list() -> str:
    return ", ".join(provider_names())


def parse_model_name(name: object) -> tuple[str, str]:
    """Split `provider:model-id` into (provider, model_id).

    Only the first colon separates, so local ids such as `openai-compatible:llama3.1:8b`
    keep theirs. Raises ModelConfigError for malformed names and unknown providers.
    """
    if not isinstance(name, str) or not name.strip():
        raise ModelConfigError(
            "No model given. Name one as provider:model-id, e.g. anthropic:claude-sonnet-4-6."
        )
    text = name.strip()
    provider, sep, model_id = text.partition(":")
    provider, model_id = provider.strip().lower(), model_id.strip()
    if not sep:
        raise ModelConfigError(
            f"Model name {text!r} has no provider. Write it as provider:model-id, "
            f"e.g. {_guess_provider(text)}:{text} (providers: {_known_list()})."
        )
    if not provider or not model_id:
        raise ModelConfigError(
            f"Model name {text!r} is malformed: both parts of provider:model-id are needed, "
            "e.g. anthropic:claude-sonnet-4-6."
        )
    builtin = declaration(provider)
    provider = builtin.name if builtin is not None else provider
    if builtin is None and provider not in _CUSTOM:
        raise ModelConfigError(
            f"Unknown provider {provider!r} in model name {text!r}. "
            f"Known providers: {_known_list()}. For a local or other OpenAI-style server "
            "use openai-compatible:<model> with a base URL.",
            provider=provider,
        )
    return provider, model_id


def _guess_provider(model_id: str) -> str:
    lowered = model_id.lower()
    for decl in BUILTIN:
        if decl.model_prefixes and lowered.startswith(decl.model_prefixes):
            return decl.name
    return next(d.name for d in BUILTIN if d.base_url_required)


def _first_env(names: tuple[str, ...]) -> tuple[str | None, str | None]:
    for var in names:
        value = os.environ.get(var, "").strip()
        if value:
            return value, var
    return None, None


def create_provider(
    provider: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    options: Mapping[str, object] | None = None,
    api: str | None = None,
) -> Provider:
    """Build the named provider; arguments win over environment variables. `options`
    (a plugin provider's own settings) go to a registered factory as keyword arguments.

    Raises ModelConfigError (permanent, a ValueError) when the provider is unknown, its
    API key is missing, `openai-compatible` has no base URL, or a built-in one is given
    options.
    """
    spec = declaration(provider)
    name = spec.name if spec is not None else provider.strip().lower()
    if name in _CUSTOM:
        extra = dict(options or {})
        return _CUSTOM[name](api_key=api_key, base_url=base_url, timeout=timeout, **extra)
    if spec is None:
        raise ModelConfigError(
            f"Unknown provider {provider!r}. Known providers: {_known_list()}.", provider=provider
        )
    if options:
        raise ModelConfigError(
            f"[providers.{name}] takes api_key and base_url; not {', '.join(sorted(options))}.",
            provider=name,
        )
    key_var = None
    if not api_key:
        api_key, key_var = _first_env(spec.key_vars + spec.token_vars)
    if not base_url:
        base_url, _ = _first_env(spec.base_url_vars)
    if spec.key_required and not api_key:
        raise ModelConfigError(
            f"No API key for {name}: set {' or '.join(spec.secret_vars)}, or add api_key under "
            f"[providers.{name}] in {user_config_file()}.",
            provider=name,
        )
    if spec.base_url_required and not base_url:
        raise ModelConfigError(
            f"{name} needs a base URL (e.g. http://localhost:11434/v1 for Ollama): set "
            f"{spec.base_url_vars[0]} or add base_url under [providers.{name}] in "
            f"{user_config_file()}.",
            provider=name,
        )
    if api and api not in spec.apis:
        raise ModelConfigError(
            f"[providers.{name}] api = {api!r}: {name} speaks "
            f"{', '.join(spec.apis) or 'one API'}; remove the key or name one of those.",
            provider=name,
        )
    cls = _adapter(spec.apis.get(api or "", spec.adapter))
    kwargs: dict[str, object] = {"api_key": api_key, "base_url": base_url, "timeout": timeout}
    if "name" in inspect.signature(cls).parameters:  # one adapter for several providers
        kwargs["name"] = name
    if key_var in spec.token_vars:
        kwargs["bearer"] = True
    return cls(**kwargs)


def _adapter(adapter: str) -> Callable[..., Provider]:
    """The adapter class a declaration names ("module:Class" in loom.llm), imported now
    (with its SDK)."""
    module_name, _, class_name = adapter.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module_name}"), class_name)


def provider_for_model(
    model: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[Provider, str]:
    """`parse_model_name` + `create_provider`: returns (provider, model_id)."""
    provider, model_id = parse_model_name(model)
    return create_provider(provider, api_key=api_key, base_url=base_url, timeout=timeout), model_id


def user_config_file() -> str:
    """The user config file as this process finds it (LOOM_HOME and XDG_CONFIG_HOME
    move it), written with `~` when it is under the home folder."""
    import os

    from loom.paths import LoomPaths

    path = str(LoomPaths.from_env().user_config_file)
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path.startswith(home + os.sep) else path
