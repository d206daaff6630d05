"""The asynchronous transport: :class:`AsyncShredcatClient` over an ``httpx.AsyncClient``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import httpx

from service.client import calls
from service.client.base import DEFAULT_TIMEOUT, ClientBase
from service.client.calls import Call, PageT
from service.client.models import CommitResult, DataFile, PlanResult, Snapshot

T = TypeVar("T")


class AsyncShredcatClient(ClientBase[httpx.AsyncClient]):
    """Asynchronous client: the same methods as :class:`~service.client.ShredcatClient`, as
    coroutines (the iterators as async iterators). ``http``: an existing ``httpx.AsyncClient`` to
    send with (its base URL is used when ``base_url`` is None)."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        retries: int = 3,
        backoff: float = 0.2,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        opened = partial(httpx.AsyncClient, timeout=timeout, transport=transport)
        super().__init__(base_url, token, retries=retries, backoff=backoff, http=http, open_http=opened)
        self._sleep = sleep

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncShredcatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            wait: float | None
            try:
                r = await self._http.send(self._request(call))
            except httpx.TransportError as e:
                wait = self._wait_after_error(call, attempt, e)
            else:
                wait = self._wait_after_response(call, attempt, r)
                if wait is None:
                    return self._done(call, call.result(r))
            await self._sleep(wait)
            attempt += 1

    async def _pages(self, page: Callable[[str | None], Call[PageT]], token: str | None = None) -> AsyncIterator[PageT]:
        while True:
            p = await self._send(page(token))
            yield p
            token = p.next_page_token
            if not token:
                return

    # --- calls of several requests ----------------------------------------------------------

    async def iter_files(
        self, namespace: str, table: str, *, prefix: str | None = None, snapshot_id: int | None = None, page_size: int | None = None
    ) -> AsyncIterator[DataFile]:
        pages = calls.paged(calls.list_files, namespace, table, prefix=prefix, snapshot_id=snapshot_id, page_size=page_size)
        async for page in self._pages(pages):
            for f in page.files:
                yield f

    async def iter_snapshots(self, namespace: str, table: str, *, page_size: int | None = None) -> AsyncIterator[Snapshot]:
        async for page in self._pages(calls.paged(calls.list_snapshots, namespace, table, page_size=page_size)):
            for s in page.snapshots:
                yield s

    async def plan_all(self, namespace: str, table: str, **plan: Any) -> PlanResult:
        """Every page of a plan (the arguments of :meth:`plan`), merged into one result (``files``
        of all pages)."""
        token = plan.pop("page_token", None)
        return PlanResult.merged([p async for p in self._pages(calls.paged(calls.plan, namespace, table, **plan), token)])

    async def extract_and_commit(
        self, namespace: str, table: str, paths: Sequence[str], *, idempotency_key: str | None = None
    ) -> CommitResult:
        """Extract the files' statistics here (in a worker thread: this process reads the files) and
        commit them, so the server needs no access to the storage."""
        from service.stats.batch import extract_all

        files = await asyncio.to_thread(extract_all, paths)
        return await self.commit_files(namespace, table, files, idempotency_key=idempotency_key)
