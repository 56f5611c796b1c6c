"""The engine: rules and repair passes over the neutral view a codec decodes.

`fast` clears an already valid history in one pass over the native messages, without
decoding (what nearly every request pays); `chunked` repairs a long broken history in
pieces, decoding only the exchanges the fast checker cannot clear; `passes` are the
repair passes over the view; `named` holds a named model only to the rules the evidence grants it;
`coverage` refuses a format that explains nothing of a
list; `pause` holds the garbage collector off during one pass. `toolpair._api` drives
them; nothing here knows a wire format by name.
"""
