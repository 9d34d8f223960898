"""port_free: what a server about to listen needs, not only that nobody listens."""

from __future__ import annotations

import socket

from graphmem.ops.devstack.process import port_free, port_open


def test_a_port_held_by_a_connection_is_not_free_though_nobody_listens_there() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        listening = server.getsockname()[1]
        assert not port_free("127.0.0.1", listening)
        with socket.socket() as client:
            client.connect(("127.0.0.1", listening))
            held = client.getsockname()[1]  # the connection's own end
            assert not port_open("127.0.0.1", held)
            assert not port_free("127.0.0.1", held)


def test_a_port_nothing_holds_is_free() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert not port_free("127.0.0.1", port)
    assert port_free("127.0.0.1", port)
