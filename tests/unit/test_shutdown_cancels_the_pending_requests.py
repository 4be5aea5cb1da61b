"""`shutdown` cancels every pending request even though cancelling one removes it from the table."""

from __future__ import annotations

from concurrent.futures import Future

from fixloop.lsp.server import FixloopServer


def test_shutdown_cancels_pending_requests_whose_callbacks_remove_them() -> None:
    protocol = FixloopServer().protocol
    futures: dict[str, Future[object]] = {}
    for msg_id in ("a", "b", "c"):
        future: Future[object] = Future()
        # pygls' own done-callback: the answer is sent and the request leaves the table, synchronously.
        future.add_done_callback(lambda _, msg_id=msg_id: protocol._request_futures.pop(msg_id, None))
        protocol._request_futures[msg_id] = futures[msg_id] = future
    shutdown = protocol.lsp_shutdown()
    try:
        next(shutdown)
    except StopIteration:
        pass
    assert all(future.cancelled() for future in futures.values())
    assert protocol._request_futures == {}
