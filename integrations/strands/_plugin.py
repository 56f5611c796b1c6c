"""`ToolpairPlugin`: installs the per-request repair in whichever form the Strands
release has: the ``InvokeModelStage.Input`` middleware (1.62 and later), otherwise a
`ToolpairModel` around ``agent.model``. Installing twice changes nothing; `remove`
undoes it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from toolpair import Policy, Repaired
from toolpair.integrations._base import OnRepair

from ._model import INTEGRATION, ToolpairModel, sends_chat

try:  # strands 1.28 and later; before it, call init_agent(agent) yourself
    from strands.plugins import Plugin as _Base
except ImportError:  # pragma: no cover - depends on the installed release
    _Base = object  # type: ignore[assignment,misc]

try:  # public from strands 1.62
    from strands.middleware import InvokeModelStage
except ImportError:  # pragma: no cover - depends on the installed release
    InvokeModelStage = None

HAS_MIDDLEWARE = InvokeModelStage is not None

#: Where an agent keeps its installation, so a second install finds the first.
_MARK = "_toolpair_install"


@dataclass
class _Install:
    plugin: ToolpairPlugin
    via: Literal["middleware", "model"]
    active: bool = True


class ToolpairPlugin(_Base):  # type: ignore[misc,valid-type]
    """Repair of every model request's messages for the agent's real provider.

    ``via="auto"`` uses the middleware where the release has it (the messages it sees are
    already Strands' own copies, so the agent's history is never touched) and the model
    wrapper elsewhere; ``"middleware"`` or ``"model"`` forces one. ``provider``,
    ``model``, ``policy``, ``on_repair``, ``strict`` and ``record_dir`` are as for
    `ToolpairModel`. ``last_repair`` is the latest report.
    """

    name = "toolpair"

    def __init__(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        policy: Policy | None = None,
        via: Literal["auto", "middleware", "model"] = "auto",
        on_repair: OnRepair | None = None,
        strict: bool = False,
        record_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if via not in ("auto", "middleware", "model"):
            raise ValueError(f"via must be 'auto', 'middleware' or 'model', not {via!r}")
        if via == "middleware" and not HAS_MIDDLEWARE:
            raise ValueError("this strands release has no strands.middleware; use via='model'")
        if _Base is not object:
            super().__init__()
        self.via = via
        #: One guard for every request of the agents it is installed on, whichever way.
        self.guard = INTEGRATION.guard(provider, model, policy, on_repair, strict, record_dir)

    @property
    def last_repair(self) -> Repaired | None:
        return self.guard.last

    def _wrap(self, inner: Any) -> ToolpairModel:
        wrapped = ToolpairModel(inner)
        wrapped.guard = self.guard
        return wrapped

    def init_agent(self, agent: Any) -> None:
        install: _Install | None = agent.__dict__.get(_MARK)
        if install is not None:
            install.plugin = self
            install.active = True
            if install.via == "model" and not isinstance(agent.model, ToolpairModel):
                agent.model = self._wrap(agent.model)
            return
        use_middleware = self.via == "middleware" or (self.via == "auto" and HAS_MIDDLEWARE)
        if use_middleware:
            install = _Install(self, "middleware")
            agent.add_middleware(InvokeModelStage.Input, _handler(install))  # type: ignore[union-attr]
        else:
            install = _Install(self, "model")
            if not isinstance(agent.model, ToolpairModel):
                agent.model = self._wrap(agent.model)
        agent.__dict__[_MARK] = install

    def remove(self, agent: Any) -> None:
        """Undo `init_agent`: the agent's own model back, the middleware inert (Strands
        has no way to unregister one)."""
        install: _Install | None = agent.__dict__.get(_MARK)
        if install is None:
            return
        install.active = False
        if install.via == "model" and isinstance(agent.model, ToolpairModel):
            agent.model = agent.model.inner


def _handler(install: _Install) -> Any:
    def toolpair_input(context: Any) -> Any:
        # A ToolpairModel set per call repairs by itself; twice would be wasted work.
        if not install.active or isinstance(context.model, ToolpairModel):
            return context
        guard = install.plugin.guard
        result = guard.repair(context.messages, context.model, chat=sends_chat(context.model))
        if result is None or not result.fixes:
            return context
        return context.replace(messages=list(result.messages))

    return toolpair_input
