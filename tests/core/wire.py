"""Small builders for wire-format histories, so each test reads like the history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Msg = dict[str, Any]

# The whole vocabulary, for the tables that use most of it (`from .wire import *`).
__all__ = [
    "BA",
    "BU",
    "GM",
    "GU",
    "OA",
    "OS",
    "OT",
    "OU",
    "RA",
    "RU",
    "A",
    "U",
    "b_res",
    "b_txt",
    "b_use",
    "call",
    "fc",
    "fco",
    "g_call",
    "g_res",
    "g_txt",
    "rs",
    "think",
    "tr",
    "tu",
    "txt",
]


def turn(role: str, key: str) -> Callable[..., Msg]:
    """A builder of ``role``'s messages that hold their blocks under ``key``."""

    def build(*blocks: Msg) -> Msg:
        return {"role": role, key: list(blocks)}

    return build


# Anthropic ---------------------------------------------------------------------------
def tu(id: str, name: str = "weather", **extra: Any) -> Msg:
    return {"type": "tool_use", "id": id, "name": name, "input": {"city": "Paris"}, **extra}


def tr(id: str, content: Any = "sunny", **extra: Any) -> Msg:
    return {"type": "tool_result", "tool_use_id": id, "content": content, **extra}


def txt(text: str) -> Msg:
    return {"type": "text", "text": text}


def think(sig: str = "sig-1") -> Msg:
    return {"type": "thinking", "thinking": "let me think", "signature": sig}


def U(*blocks: Any) -> Msg:
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return {"role": "user", "content": blocks[0]}
    return {"role": "user", "content": list(blocks)}


def A(*blocks: Any) -> Msg:
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return {"role": "assistant", "content": blocks[0]}
    return {"role": "assistant", "content": list(blocks)}


# Bedrock -----------------------------------------------------------------------------
def b_use(id: str, name: str = "weather") -> Msg:
    return {"toolUse": {"toolUseId": id, "name": name, "input": {"city": "Paris"}}}


def b_res(id: str, text: str = "sunny", status: str | None = None) -> Msg:
    res: Msg = {"toolUseId": id, "content": [{"text": text}] if text else []}
    if status:
        res["status"] = status
    return {"toolResult": res}


def b_txt(text: str) -> Msg:
    return {"text": text}


BU = turn("user", "content")
BA = turn("assistant", "content")


# OpenAI Chat / Mistral ---------------------------------------------------------------
def call(id: str, name: str = "weather") -> Msg:
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": '{"city":"Paris"}'},
    }


def OA(*calls: Msg, content: Any = None) -> Msg:
    m: Msg = {"role": "assistant", "content": content}
    if calls:
        m["tool_calls"] = list(calls)
    return m


def OT(id: str, content: str = "sunny", **extra: Any) -> Msg:
    return {"role": "tool", "tool_call_id": id, "content": content, **extra}


def OU(text: str) -> Msg:
    return {"role": "user", "content": text}


def OS(text: str = "be brief") -> Msg:
    return {"role": "system", "content": text}


# OpenAI Responses --------------------------------------------------------------------
def fc(call_id: str, id: str | None = None, name: str = "weather") -> Msg:
    m: Msg = {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}
    if id is not None:
        m["id"] = id
    return m


def fco(call_id: str, output: str = "sunny") -> Msg:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def rs(id: str, **extra: Any) -> Msg:
    return {"type": "reasoning", "id": id, "summary": [], **extra}


def RU(text: str) -> Msg:
    return {"role": "user", "content": text}


def RA(text: str, id: str | None = None) -> Msg:
    m: Msg = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
    if id is not None:
        m["id"] = id
    return m


# Gemini ------------------------------------------------------------------------------
def g_call(name: str = "weather", id: str | None = None, sig: str | None = None) -> Msg:
    fcall: Msg = {"name": name, "args": {"city": "Paris"}}
    if id is not None:
        fcall["id"] = id
    part: Msg = {"functionCall": fcall}
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def g_res(name: str = "weather", id: str | None = None, response: Any = None) -> Msg:
    fr: Msg = {"name": name, "response": response if response is not None else {"result": "sunny"}}
    if id is not None:
        fr["id"] = id
    return {"functionResponse": fr}


g_txt = b_txt  # a Gemini text part is a Bedrock text block
GU = turn("user", "parts")
GM = turn("model", "parts")
