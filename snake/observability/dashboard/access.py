"""Who may see the dashboard (``/games``) and the metrics (``/metrics``).

The service must be public (the engine calls it from the internet); its games and its
reasoning must not be. The rule:

- with the token ``NUPPEPPOU_DASHBOARD_TOKEN`` set, every request needs it, from this
  machine too: sent as ``Authorization: Bearer <token>`` (Prometheus, curl), or once as
  ``?token=<token>``, which sets an HttpOnly, SameSite=Strict cookie and redirects to the
  address without it (a browser); a missing or wrong token gets 401. (A reverse proxy or
  tunnel on the same machine makes every stranger's request come from loopback, and not
  every one says so in a header: nginx's plain ``proxy_pass`` does not.)
- with no token set, only a request from the machine itself gets in (a loopback address,
  and no ``Forwarded`` / ``X-Forwarded-For`` / ``X-Real-IP`` header, which a proxy that
  does say so adds); everyone else gets 404, as if the pages did not exist. Behind a
  proxy on the same machine, set a token.

Tokens are compared in constant time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Mapping

COOKIE = "nuppeppou_dashboard"
FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    status: int              # 200, 401 or 404
    set_cookie: bool = False  # the token came in the query: remember it and redirect


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def check(remote_addr: str | None, headers: Mapping[str, str], cookies: Mapping[str, str],
          query_token: str | None, token: str | None) -> Verdict:
    """Whether a request may see the dashboard (see the module docstring)."""
    if not token:
        local = is_loopback(remote_addr) and not any(h in headers for h in FORWARDING_HEADERS)
        return Verdict(True, 200) if local else Verdict(False, 404)
    authorization = headers.get("Authorization", "")
    offered = [(authorization[7:].strip(), False)] if authorization.startswith("Bearer ") else []
    offered += [(cookies.get(COOKIE, ""), False), (query_token or "", True)]
    for value, from_query in offered:
        if value and hmac.compare_digest(value.encode(), token.encode()):
            return Verdict(True, 200, set_cookie=from_query)
    return Verdict(False, 401)
