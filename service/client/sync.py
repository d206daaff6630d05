"""The synchronous transport: :class:`ShredcatClient` over an ``httpx.Client``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

import httpx

from service.client import calls
from service.client.base import DEFAULT_TIMEOUT, ClientBase
from service.client.calls import Call, PageT
from service.client.models import CommitResult, DataFile, PlanResult, Snapshot

T = TypeVar("T")


class ShredcatClient(ClientBase[httpx.Client]):
    """Synchronous client. ``http``: an existing ``httpx.Client`` to send with (its base URL is used
    when ``base_url`` is None), e.g. a FastAPI TestClient."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        retries: int = 3,
        backoff: float = 0.2,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        http: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        opened = partial(httpx.Client, timeout=timeout, transport=transport)
        super().__init__(base_url, token, retries=retries, backoff=backoff, http=http, open_http=opened)
        self._sleep = sleep

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> ShredcatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            wait: float | None
            try:
                r = self._http.send(self._request(call))
            except httpx.TransportError as e:
                wait = self._wait_after_error(call, attempt, e)
            else:
                wait = self._wait_after_response(call, attempt, r)
                if wait is None:
                    return self._done(call, call.result(r))
            self._sleep(wait)
            attempt += 1

    def _pages(self, page: Callable[[str | None], Call[PageT]], token: str | None = None) -> Iterator[PageT]:
        while True:
            p = self._send(page(token))
            yield p
            token = p.next_page_token
            if not token:
                return

    # --- calls of several requests ----------------------------------------------------------

    def iter_files(
        self, namespace: str, table: str, *, prefix: str | None = None, snapshot_id: int | None = None, page_size: int | None = None
    ) -> Iterator[DataFile]:
        pages = calls.paged(calls.list_files, namespace, table, prefix=prefix, snapshot_id=snapshot_id, page_size=page_size)
        for page in self._pages(pages):
            yield from page.files

    def iter_snapshots(self, namespace: str, table: str, *, page_size: int | None = None) -> Iterator[Snapshot]:
        for page in self._pages(calls.paged(calls.list_snapshots, namespace, table, page_size=page_size)):
            yield from page.snapshots

    def plan_all(self, namespace: str, table: str, **plan: Any) -> PlanResult:
        """Every page of a plan (the arguments of :meth:`plan`), merged into one result (``files``
        of all pages)."""
        token = plan.pop("page_token", None)
        return PlanResult.merged(list(self._pages(calls.paged(calls.plan, namespace, table, **plan), token)))

    def extract_and_commit(
        self, namespace: str, table: str, paths: Sequence[str], *, idempotency_key: str | None = None
    ) -> CommitResult:
        """Extract the files' statistics here (this process reads the files) and commit them, so the
        server needs no access to the storage."""
        from service.stats.batch import extract_all

        return self.commit_files(namespace, table, extract_all(paths), idempotency_key=idempotency_key)
