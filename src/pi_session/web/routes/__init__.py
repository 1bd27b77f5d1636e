"""The web app's routes, one module per part of the site; each module's
``routes(served)`` returns its :class:`starlette.routing.Route` list and
:func:`pi_session.web.app.create_app` joins them.

==========================================================  =======================
URL                                                         module
==========================================================  =======================
``GET /api/v1/sessions``, ``/api/v1/sessions/{sid}``,       :mod:`.sessions`
``…/{sid}/entries/{eid}``, ``…/{sid}/context``,
``…/{sid}/export``
``GET /api/v1/sessions/{sid}/events`` (live, SSE)           :mod:`.events`
``POST /api/v1/sessions/{sid}/{action}``                    :mod:`.actions`
``GET /api/v1/search``, ``/search``                         :mod:`.search`
``GET /api/v1/usage/daily``, ``/api/v1/usage/breakdown``,   :mod:`.usage`
``/costs``
``GET /``, ``/s/{sid}``, ``/s/{sid}/context``               :mod:`.pages`
``GET /static/{name}``                                      :mod:`.static`
==========================================================  =======================

:mod:`.common` holds what they share (:class:`.common.Serving`: the store's
access, the config, the error answers).
"""

from __future__ import annotations

from starlette.routing import Route

from . import actions, events, pages, search, sessions, static, usage
from .common import Serving

__all__ = ["MODULES", "Serving", "all_routes"]

MODULES = (sessions, events, actions, search, usage, pages, static)
"""The route modules, in the order their routes are tried."""


def all_routes(served: Serving) -> list[Route]:
    """Every route of the app, from each module of :data:`MODULES`."""
    return [route for module in MODULES for route in module.routes(served)]
