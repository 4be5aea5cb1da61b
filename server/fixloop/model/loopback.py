"""Bare HTTP/1.0 requests to the managed model's server on 127.0.0.1 (no proxy, no client library): whether
it is ready, and its slot actions."""

from __future__ import annotations

import logging
import socket

log = logging.getLogger(__name__)

MOST_BYTES = 1 << 22  # an answer is read up to this much


def loopback_request(port: int, line: str, body: bytes = b"", timeout: float = 2.0) -> bytes | None:
    """The body of a 200 answer to `line` (`GET /slots`) sent to 127.0.0.1:`port`; None on any failure or
    another status. The body is read by its Content-Length: a keep-alive server need not close first."""
    head = f"{line} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(head.encode() + body)
            answer = connection.makefile("rb")
            status = answer.readline().split()[1:2]
            length = 0
            while (header := answer.readline().strip()) and len(header) < 8192:
                name, _, value = header.partition(b":")
                length = int(value) if name.strip().lower() == b"content-length" else length
            payload = answer.read(min(length, MOST_BYTES)) if length else answer.read(MOST_BYTES)
    except (OSError, ValueError) as error:
        log.debug("%s on port %d failed: %s", line, port, error)
        return None
    return payload if status == [b"200"] else None
