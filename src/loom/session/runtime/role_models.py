"""Which model architect mode plans with and which carries out its steps (and writes
compaction summaries): `model.architect` / `model.editor` when set, else the provider's
own strong and fast models for the model in use (`loom.config.role_model`)."""

from __future__ import annotations

from typing import Any, Literal

from loom.config import role_model

Role = Literal["architect", "editor"]


def model_for(session: Any, role: Role) -> str:
    configured = getattr(session.options, f"{role}_model", None)
    return role_model(role, session.model, configured)


def check_architect_models(session: Any) -> None:
    """SetupError, in one line, when architect mode could not call its models (no key,
    unknown provider): found when the mode is chosen, before any turn."""
    from loom.core.errors import SetupError
    from loom.llm.base import LlmError

    for role, does in (("architect", "plans"), ("editor", "carries out the steps")):
        model = model_for(session, role)  # type: ignore[arg-type]
        try:
            session.llm.provider(model)  # built now and kept for the turn
        except (LlmError, ValueError) as exc:
            raise SetupError(
                f"architect mode cannot start: {model} (model.{role}, {does}): {exc}"
            ) from exc
