"""Dask's scheduler and worker without their HTTP server, for the embedded cluster.

Dask starts an HTTP server on every scheduler (port 8787 by default) and worker, even with the
dashboard off: Prometheus, health, JSON and proxy routes, unauthenticated and not covered by
the cluster's TLS. The sweep reads none of them, so these classes never listen: nothing but
the TLS comm ports of the cluster is open while a sweep runs (tests/security checks with ss).
Module-level classes, so that a nanny's worker process can import them.
"""

from __future__ import annotations

from distributed import Scheduler as _Scheduler
from distributed import Worker as _Worker


class _NoHTTP:
    def start_http_server(self, routes, dashboard_address, default_port=0, ssl_options=None):
        # What Dask's own method leaves behind, without the listening: the rest of the scheduler
        # and worker code reads these attributes.
        from distributed.http.routing import RoutingApplication
        from tornado.httpserver import HTTPServer

        self.http_application = RoutingApplication([])
        self.http_server = HTTPServer(self.http_application)


class Scheduler(_NoHTTP, _Scheduler):
    pass


class Worker(_NoHTTP, _Worker):
    pass
