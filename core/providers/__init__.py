"""Provider profiles: one module per provider, registered here by name."""

from __future__ import annotations

from toolpair.providers._base import Context, Profile
from toolpair.providers._models import model_families
from toolpair.providers._rule import Evidence, Kind, Rule, Stance, Status
from toolpair.providers.portable import MEMBERS, Portable

#: Every provider and host profile (the members of portable), then portable itself.
PROFILES: dict[str, Profile] = {p.name: p for p in (*MEMBERS, Portable())}
#: The provider names `validate` and `repair` accept.
PROVIDERS: tuple[str, ...] = tuple(PROFILES)


def get_profile(provider: str, model: str | None = None) -> Profile:
    """The profile for ``provider``, specialised for ``model`` where its family's rules
    differ; an unknown or missing model keeps the strictest rules of that API."""
    try:
        profile = PROFILES[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}") from None
    if model is None:
        return profile
    return profile.for_model(model)


__all__ = [
    "PROFILES",
    "PROVIDERS",
    "Context",
    "Evidence",
    "Kind",
    "Profile",
    "Rule",
    "Stance",
    "Status",
    "get_profile",
    "model_families",
]
