"""OpenAI Responses (reference/providers.md §4, R1-R8). Pairing is by ``call_id``
anywhere in ``input`` (plus the stored previous response), so placement is free;
reasoning items must sit directly before the item they produced."""

from __future__ import annotations

from collections.abc import Sequence

from toolpair._model import Message, Violation
from toolpair._view import flat, pid
from toolpair.providers._base import Context, Profile

R1 = "No tool output found for function call {id}."
R2 = "No tool call found for function call output with call_id {id}."
R3 = "Item '{id}' of type 'reasoning' was provided without its required following item."
R4 = "Duplicate item found with id {id}. Remove duplicate items from your input and try again."
R5 = "Invalid 'input[{i}].id': '{id}'. Expected an ID that begins with 'fc'."
R6 = (
    "Invalid 'input[{i}].call_id': string too long. Expected a string with maximum length 64, "
    "but got a string with length {n} instead."
)
R7 = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try "
    "again with `store` set to true, or remove this item from your input."
)


class Responses(Profile):
    name = "openai-responses"
    reasoning_adjacency = True
    strict_pairing = False
    id_max = 64

    def rules(self, messages: Sequence[Message], ctx: Context) -> list[Violation]:
        items = flat(messages)
        out: list[Violation] = []
        add = out.append
        calls: dict[str, int] = {}
        outputs: dict[str, int] = {}
        item_ids: set[str] = set()
        for n, (it, _role) in enumerate(items):
            b = it.block
            if b.item_id is not None:
                if b.item_id in item_ids:
                    add(
                        Violation(
                            "openai-responses.duplicate_item",
                            R4.format(id=b.item_id),
                            it.msg,
                            (b.item_id,),
                            "input",
                        )
                    )
                item_ids.add(b.item_id)
            if b.kind == "call":
                cid = pid(b)
                calls.setdefault(cid, it.msg)
                if (
                    b.item_id is not None
                    and b.sub == "function_call"
                    and not b.item_id.startswith("fc")
                ):
                    add(
                        Violation(
                            "openai-responses.bad_item_id",
                            R5.format(i=it.msg, id=b.item_id),
                            it.msg,
                            (b.item_id,),
                            f"input[{it.msg}].id",
                        )
                    )
                if len(cid) > self.id_max:
                    add(
                        Violation(
                            "openai-responses.call_id_too_long",
                            R6.format(i=it.msg, n=len(cid)),
                            it.msg,
                            (cid,),
                            f"input[{it.msg}].call_id",
                        )
                    )
            elif b.kind == "result":
                outputs.setdefault(pid(b), it.msg)
            elif b.kind == "reasoning":
                nxt = items[n + 1] if n + 1 < len(items) else None
                rid = b.item_id or ""
                if nxt is None or nxt[0].block.kind == "reasoning" or nxt[1] != "assistant":
                    add(
                        Violation(
                            "openai-responses.reasoning_without_following",
                            R3.format(id=rid),
                            it.msg,
                            (rid,),
                            "input",
                        )
                    )
                native = b.native if isinstance(b.native, dict) else {}
                if ctx.store is False and not native.get("encrypted_content"):
                    add(
                        Violation(
                            "openai-responses.item_not_persisted",
                            R7.format(id=rid),
                            it.msg,
                            (rid,),
                            "input",
                        )
                    )
        for cid, at in calls.items():
            if cid not in outputs:
                add(
                    Violation(
                        "openai-responses.missing_output", R1.format(id=cid), at, (cid,), "input"
                    )
                )
        if ctx.previous_response_id is None:
            for cid, at in outputs.items():
                if cid not in calls:
                    add(
                        Violation(
                            "openai-responses.orphan_output", R2.format(id=cid), at, (cid,), "input"
                        )
                    )
        return out
