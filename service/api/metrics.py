"""Prometheus metrics, in a registry of the app's own (tests build many apps in one process).

With several worker processes (``shredcat serve --workers N``) each worker counts what it served,
so ``/metrics`` uses prometheus_client's multiprocess mode: ``PROMETHEUS_MULTIPROC_DIR`` (set by
``shredcat serve``) makes every worker write its values to files there, and whichever worker
answers ``/metrics`` sums them (:class:`~prometheus_client.multiprocess.MultiProcessCollector`).
There are only counters and histograms, whose samples of a worker that exited are kept (they
still count what it served).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from service.catalog.replicas import StandbyStatus

#: prometheus_client reads this variable when it is imported (it selects the value storage).
MULTIPROC_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        self.multiprocess = bool(os.environ.get(MULTIPROC_DIR_ENV))
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.request_latency = Histogram(
            "shredcat_http_request_duration_seconds",
            "HTTP request latency by route template, method and status.",
            ["method", "route", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.commits = Counter(
            "shredcat_commits_total",
            "Commits answered, by how the files were given (paths or stats) and outcome.",
            ["mode", "outcome"],
            registry=r,
        )
        self.files_registered = Counter(
            "shredcat_files_registered_total", "Data files added to tables by commits.", registry=r
        )
        self.files_removed = Counter("shredcat_files_removed_total", "Data files removed from tables.", registry=r)
        self.prune_calls = Counter(
            "shredcat_prune_calls_total", "Plan (prune) calls answered, by outcome.", ["outcome"], registry=r
        )
        self.files_considered = Counter(
            "shredcat_prune_files_considered_total", "Live files considered by plan calls.", registry=r
        )
        self.files_pruned = Counter("shredcat_prune_files_pruned_total", "Files skipped by plan calls.", registry=r)
        self.catalog_reads = Counter(
            "shredcat_catalog_reads_total",
            "Catalog read transactions, by the database that answered (primary, or a hot standby's host:port/db).",
            ["database"],
            registry=r,
        )

    def render(self, standbys: Sequence[StandbyStatus] = ()) -> bytes:
        """The counters (of every worker), then the hot standbys as the answering worker last
        measured them (their lag is the standby's, not a worker's: no sum)."""
        if self.multiprocess:
            from prometheus_client.multiprocess import MultiProcessCollector

            every_worker = CollectorRegistry()
            MultiProcessCollector(every_worker)
            counted = generate_latest(every_worker)
        else:
            counted = generate_latest(self.registry)
        if not standbys:
            return counted
        gauges = CollectorRegistry()
        gauges.register(_Standbys(standbys))
        return counted + generate_latest(gauges)


class _Standbys(Collector):
    """Replication lag and state per standby; an unknown lag is NaN, never 0."""

    def __init__(self, standbys: Sequence[StandbyStatus]) -> None:
        self._standbys = standbys

    def collect(self) -> Iterator[GaugeMetricFamily]:
        nan = float("nan")
        seconds = GaugeMetricFamily(
            "shredcat_standby_lag_seconds", "Replication lag of each hot standby (NaN: unknown).", labels=["standby"]
        )
        size = GaugeMetricFamily(
            "shredcat_standby_lag_bytes", "WAL bytes each hot standby has yet to replay (NaN: unknown).", labels=["standby"]
        )
        state = GaugeMetricFamily(
            "shredcat_standby_state",
            "1 for each hot standby's state: ok (serving reads), lagging, down, promoted or unknown.",
            labels=["standby", "state"],
        )
        for s in self._standbys:
            seconds.add_metric([s.name], nan if s.lag_s is None else s.lag_s)
            size.add_metric([s.name], nan if s.lag_bytes is None else float(s.lag_bytes))
            state.add_metric([s.name, s.state], 1.0)
        yield from (seconds, size, state)
