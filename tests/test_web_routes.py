"""The web app's routes are found by URL: each route comes from one module
of :mod:`pi_session.web.routes`, whose docstring names its URL, and the
package's table names that module for it."""

from __future__ import annotations

from pathlib import Path

import pi_session.web.routes as routes_package
from pi_session.stores import open_store
from pi_session.web import WebConfig, create_app
from pi_session.web.actions import ACTIONS
from pi_session.web.data import StoreAccess


def _documented(doc: str, path: str) -> bool:
    """Whether ``doc`` names ``path`` (an action's URL as ``…/{action}``
    with the action's name)."""
    head, _, last = path.rpartition("/")
    return path in doc or (last in ACTIONS and f"{head}/{{action}}" in doc and last in doc)


def test_every_route_comes_from_a_module_that_documents_it(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    config = WebConfig()
    served = routes_package.Serving(StoreAccess(store), config)
    by_module = {module.__name__.rsplit(".", 1)[1]: module.routes(served) for module in routes_package.MODULES}
    app_routes = {(r.path, frozenset(r.methods or ())) for r in create_app(store, config).app.routes}
    module_routes = [(r.path, frozenset(r.methods or ())) for found in by_module.values() for r in found]
    assert sorted(module_routes, key=str) == sorted(app_routes, key=str)  # the app is the modules' routes, each once
    table = routes_package.__doc__ or ""
    for name, found in by_module.items():
        module_doc = getattr(routes_package, name).__doc__ or ""
        for route in found:
            assert _documented(module_doc, route.path), f"{name}: {route.path}"
        assert f":mod:`.{name}`" in table, name
