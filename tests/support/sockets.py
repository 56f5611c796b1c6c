"""Raw HTTP on loopback: bytes a client library would never send, and what comes back."""

from __future__ import annotations

import socket


def exchange(port: int, data: bytes, timeout: float = 3.0) -> bytes:
    """Send ``data`` on a fresh connection; everything read until it closes, and
    ``<open>`` after it when the server kept it open past ``timeout``."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except TimeoutError:
        out += b"<open>"
    s.close()
    return out
