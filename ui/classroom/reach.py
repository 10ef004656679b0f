"""Whether a student's phone can open the room's link: a teacher who opened the app at http://localhost:PORT would
project http://localhost:PORT/?room=..., which opens on this computer only. The link then takes the public address
set for the server (Streamlit's browser.serverAddress), else this computer's address on its network."""
from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit, urlunsplit

LOCAL_NAMES = {"localhost", "0.0.0.0"}  # names of this computer alone ("0.0.0.0": every interface, from a browser here)
NO_TRAFFIC_PEER = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737): connecting a UDP socket sends nothing, it picks a route


def local_only(url: str) -> bool:
    """Whether the address names this computer only (localhost, 127.x.x.x, ::1), so no other device opens it."""
    host = urlsplit(url).hostname or ""
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def with_host(url: str, host: str) -> str:
    """The address with another host, its scheme, port and path kept."""
    parts = urlsplit(url)
    shown = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=shown + port))


def public_host(server_address: str | None) -> str | None:
    """The server's address set for browsers (browser.serverAddress), if it names more than this computer."""
    if not server_address or local_only(f"http://{server_address}"):
        return None
    return server_address


def machine_address() -> str | None:
    """This computer's address on the network it reaches others by, or None without one (no network)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(NO_TRAFFIC_PEER)
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address
