"""OpenAI Responses: a flat ``input`` list of items. Every item is one neutral message
so that indices stay the provider's: a function_call is an assistant message with one
call block, a function_call_output a tool message, a reasoning item an assistant
message with one ``reasoning`` block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from toolpair._model import (
    Block,
    Bone,
    Codec,
    InvalidHistory,
    Message,
    Role,
    Shape,
    Skeleton,
    synthetic_result,
)
from toolpair.formats import _checks
from toolpair.formats._checks import Checker
from toolpair.formats._common import (
    ORPHAN_TEXT,
    content_is_empty,
    optional_id,
    require_id,
    require_mapping,
    stringify,
)
from toolpair.formats._wire import USER_ITEMS, WireCodec

#: Client-executed call item types and the output type that answers each (openai-python
#: 3.57 ``response_input_item_param``): Codex's own tools and Programmatic Tool Calling's
#: ``program`` pair by ``call_id`` as function calls do.
CALL_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "program": "program_output",
}
OUTPUT_TYPES = {v: k for k, v in CALL_TYPES.items()}
#: Call item types that are the client's only with ``execution: "client"``: tool search
#: run by the application is answered by a ``tool_search_output`` of its ``call_id``
#: (the guide's client-executed mode; a ``function_call_output`` was taken too, a
#: recorded 200 on gpt-5.6). Hosted (``server``, the default) needs nothing sent back.
CLIENT_CALL_TYPES = {"tool_search_call": "tool_search_output"}
_CLIENT_OUTPUT_TYPES = {v: k for k, v in CLIENT_CALL_TYPES.items()}


def _client(item: Mapping[str, Any]) -> bool:
    return item.get("execution") == "client" and isinstance(item.get("call_id"), str)


#: The key an output names its call by: ``local_shell_call_output`` carries the call's
#: ``call_id`` as its ``id``.
_OUTPUT_KEY = {"local_shell_call_output": "id"}
#: Where an output keeps what it answers with, where that is not ``output``.
_CONTENT_KEY = {"program_output": "result", "tool_search_output": "tools"}
#: Developer-role items that are not messages (new tools announced mid-conversation).
_DEVELOPER_ITEMS = frozenset({"additional_tools"})
_MESSAGE_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
}


#: A block the skeleton checkers do not model.
_OTHER: Bone = ("other", None, None)
_REASONING: Bone = ("reasoning", None, None)


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "".join(texts) if texts else None
    return None


#: Responses input item types the rules know (calls, outputs, messages, reasoning,
#: server-side tool items).
RESPONSES_KNOWN = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "image_generation_call",
        "code_interpreter_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "item_reference",
        "compaction",
        "tool_search_call",
        "program",
        "program_output",
        "additional_tools",
        "tool_search_output",
    }
)


class ResponsesCodec(WireCodec):
    name = "openai-responses"
    shape: Shape = "items"
    #: The key of the item list inside a request body.
    body_key = "input"
    #: Items of a type it does not know are skipped, not refused, and detection falls
    #: back to this format: a detected list it explains nothing of gets no verdict.
    skips_unknown = True
    #: Its own checkers repair in pieces; the skeleton's judge whole histories.
    pieces: ClassVar[frozenset[str] | None] = frozenset({"openai-responses", "deepseek-responses"})
    checks: ClassVar[Mapping[str, Checker]] = {
        "openai-responses": _checks.responses,
        "deepseek-responses": _checks.deepseek_responses,
        # Items sent to Chat Completions (the Agents SDK's Chat models): Chat's rules.
        "openai": _checks.responses_chat,
    }
    starts = Codec.starts

    #: The item types on the user's side of the conversation (`side`).
    user_items: ClassVar[frozenset[str]] = USER_ITEMS

    def side(self, native: Any) -> str:
        if type(native) is not dict:
            return "u"
        t = native.get("type")
        if t in self.user_items:
            return "u"
        if t is None or t == "message":
            return "a" if native.get("role") == "assistant" else "u"
        return "a"

    def judges(self, item: Mapping[str, Any]) -> bool:
        t = item.get("type")
        return t in RESPONSES_KNOWN or not isinstance(t, str)

    def body_context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The server state the request names, and whether it is stored."""
        prev = body.get("previous_response_id")
        conv = body.get("conversation")
        if not isinstance(prev, str) and conv:
            # A conversation holds the earlier items on the server as a previous response
            # does: the request proves that its outputs may answer calls it does not show.
            if isinstance(conv, Mapping):
                conv = conv.get("id")
            prev = conv if isinstance(conv, str) else "conversation"
        ctx: dict[str, Any] = {"previous_response_id": prev if isinstance(prev, str) else None}
        if "store" in body:
            ctx["store"] = bool(body["store"])
        return ctx

    def skeleton(self, messages: Sequence[Any]) -> Skeleton | None:
        """What `decode` makes of the items, read in one pass (the checkers of rule
        families this codec has none of read it); None where decode would refuse one."""
        out: Skeleton = []
        add = out.append
        calls, outputs, roles = CALL_TYPES, OUTPUT_TYPES, _MESSAGE_ROLES
        for item in messages:
            # Most items are plain dicts: an ABC check on each costs more than the rest.
            if type(item) is not dict and not isinstance(item, Mapping):
                return None
            get = item.get
            t = get("type")
            if t in calls:
                cid = get("call_id")
                if type(cid) is not str and not isinstance(cid, str):
                    return None
                if t == "program" or "caller" in item:
                    add(("assistant", [_OTHER]))
                    continue
                name = get("name")
                kind = "item_call" if isinstance(get("id"), str) else "call"
                add(("assistant", [(kind, cid, name if isinstance(name, str) else None)]))
            elif t in outputs:
                key = _OUTPUT_KEY.get(t, "call_id")
                rid = get(key)
                if rid is not None and not isinstance(rid, str):
                    return None
                odd = (
                    rid is None or "caller" in item or (key != "id" and isinstance(get("id"), str))
                )
                add(("tool", [_OTHER if odd else ("result", rid, False)]))
            elif t == "reasoning":
                add(("assistant", [_REASONING]))
            elif t == "message" or (t is None and "role" in item):
                role = roles.get(get("role"))  # type: ignore[arg-type]
                if role is None:
                    return None
                content = get("content")
                text = content if type(content) is str else _text_of(content)
                add((role, [("text", None, text) if text is not None else _OTHER]))
            elif t in _DEVELOPER_ITEMS:
                add(("system", [_OTHER]))
            elif t is None:
                return None
            else:
                add(("assistant", [_OTHER]))
        return out

    def decode(self, messages: Sequence[Any]) -> list[Message]:
        out: list[Message] = []
        for i, raw in enumerate(messages):
            item = require_mapping(raw, i, "input item")
            t = item.get("type")
            item_id = item.get("id") if isinstance(item.get("id"), str) else None
            if t in CALL_TYPES or (t in CLIENT_CALL_TYPES and _client(item)):
                block = Block(
                    "call",
                    raw,
                    id=require_id(item.get("call_id"), i, f"{t}.call_id"),
                    name=item.get("name") if isinstance(item.get("name"), str) else None,
                    item_id=item_id,
                    sub=t,
                )
                out.append(Message("assistant", [block], raw, i))
            elif t in OUTPUT_TYPES or (t in _CLIENT_OUTPUT_TYPES and _client(item)):
                key = _OUTPUT_KEY.get(t, "call_id")
                rid = optional_id(item.get(key), i, f"{t}.{key}")
                block = Block(
                    "result",
                    raw,
                    id=rid,
                    missing_id=rid is None,
                    empty=content_is_empty(item.get(_CONTENT_KEY.get(t, "output"))),
                    item_id=None if key == "id" else item_id,
                    sub=t,
                )
                out.append(Message("tool", [block], raw, i))
            elif t == "reasoning":
                out.append(Message("assistant", [Block("reasoning", raw, item_id=item_id)], raw, i))
            elif t == "message" or (t is None and "role" in item):
                role = item.get("role")
                if role not in _MESSAGE_ROLES:
                    raise InvalidHistory(f"unknown role {role!r}", i)
                text = _text_of(item.get("content"))
                block = Block("text", raw, text=text, item_id=item_id)
                out.append(Message(_MESSAGE_ROLES[role], [block], raw, i))
            elif t in _DEVELOPER_ITEMS:
                # Passed through where it stands; it pairs with nothing and, being the
                # developer's, is no item a reasoning item produced.
                out.append(Message("system", [Block("other", raw, item_id=item_id, sub=t)], raw, i))
            elif t is None:
                raise InvalidHistory("input item has neither a type nor a role", i)
            else:
                # web_search_call, mcp_call, item_reference, computer_call...: kept as is.
                out.append(
                    Message("assistant", [Block("other", raw, item_id=item_id, sub=str(t))], raw, i)
                )
        return out

    def build(self, role: Role, blocks: list[Block], template: Message | None) -> Any:
        # Items are never merged or split, so a changed message is one changed item.
        if len(blocks) != 1:
            raise ValueError("a Responses item holds exactly one block")
        return blocks[0].native

    def make_result(self, call: Block, text: str, *, is_error: bool) -> Block:
        sub = call.sub or "function_call"
        out_type = CALL_TYPES.get(sub) or CLIENT_CALL_TYPES.get(sub, "function_call_output")
        native: dict[str, Any] = {"type": out_type, _OUTPUT_KEY.get(out_type, "call_id"): call.id}
        if out_type == "tool_search_output":
            # The documented answer: the tools the search loaded (none), as the client's.
            native["execution"] = "client"
            native["tools"] = []
        elif out_type == "shell_call_output":
            outcome = {"type": "exit", "exit_code": 1 if is_error else 0}
            native["output"] = [{"stdout": "", "stderr": text, "outcome": outcome}]
        elif out_type == "apply_patch_call_output":
            native["status"] = "failed" if is_error else "completed"
            native["output"] = text
        elif out_type == "program_output":
            native["result"] = text
            native["status"] = "incomplete"
        else:
            native["output"] = text
        caller = call.native.get("caller") if isinstance(call.native, dict) else None
        if caller is not None:
            native["caller"] = caller  # an output echoes its call's caller (PTC)
        return synthetic_result(native, call, is_error=is_error, sub=out_type)

    def make_text(self, text: str, role: Role) -> Block:
        native = {"type": "message", "role": role, "content": text}
        return Block("text", native, text=text)

    def with_id(self, block: Block, new_id: str) -> Block:
        key = _OUTPUT_KEY.get(block.sub or "", "call_id") if block.kind == "result" else "call_id"
        return replace(block, native={**block.native, key: new_id}, id=new_id)

    def without_item_id(self, block: Block) -> Block:
        """The call without its ``fc_`` item id (R3: its reasoning item is gone)."""
        native = {k: v for k, v in block.native.items() if k != "id"}
        return replace(block, native=native, item_id=None)

    def result_as_text(self, block: Block) -> Block:
        text = ORPHAN_TEXT.format(
            id=block.id or "(none)", content=stringify(block.native.get("output"))
        )
        return self.make_text(text, "user")

    # Editing (compaction): optional codec methods, see toolpair.compact.

    def content_of(self, block: Block) -> Any:
        """A result's content as the format stores it."""
        return block.native.get(_CONTENT_KEY.get(block.sub or "", "output"))

    def with_content(self, block: Block, text: str) -> Block:
        """A copy of an output item whose output is the plain text ``text`` (a shell
        output's one chunk of stdout, a program output's result)."""
        value: Any = text
        key = "output"
        if block.sub == "tool_search_output":
            return block  # its tools are definitions the model goes on calling, not text
        if block.sub == "shell_call_output":
            value = [{"stdout": text, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]
        elif block.sub == "program_output":
            key = "result"
        return replace(block, native={**block.native, key: value}, empty=not text.strip())

    def without_input(self, block: Block) -> Block:
        """A copy of a call item with empty arguments (the same block if already empty)."""
        key, empty = ("input", "") if block.sub == "custom_tool_call" else ("arguments", "{}")
        if block.native.get(key) == empty:
            return block
        return replace(block, native={**block.native, key: empty})
