"""What the sync and async clients share: the methods that send one call, the base URL, the token
and the retry policy. A transport adds only how a request is sent and how a wait is slept
(``_send``) and the calls that take several requests (paging, ``plan_all``, ``extract_and_commit``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Generic, ParamSpec, TypeVar, overload

import httpx

from service.client import calls
from service.client.calls import Call
from service.client.errors import ShredcatConnectionError
from service.client.retry import RetryPolicy

P = ParamSpec("P")
T = TypeVar("T")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)

DEFAULT_TIMEOUT = 60.0


class route(Generic[P, T]):
    """A client method that sends the call built by ``build``: on :class:`ShredcatClient` it returns
    the answer's value, on :class:`AsyncShredcatClient` a coroutine of it."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        self.__name__ = build.__name__
        self.__doc__ = build.__doc__
        self.__signature__ = inspect.signature(build).replace(return_annotation=inspect.Signature.empty)

    # The transports are told apart by the httpx client they hold, not by their classes: this
    # module is imported by theirs and must not import them back.
    @overload
    def __get__(self, client: None, owner: type | None = None) -> route[P, T]: ...
    @overload
    def __get__(self, client: ClientBase[httpx.Client], owner: type | None = None) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, client: ClientBase[httpx.AsyncClient], owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, client: Any, owner: type | None = None) -> Any:
        if client is None:
            return self
        build, send = self._build, client._send

        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return send(build(*args, **kwargs))

        method.__name__ = method.__qualname__ = self.__name__
        method.__doc__ = self.__doc__
        # inspect reads __signature__ from the function's attributes (its __dict__), where typeshed
        # declares none.
        method.__dict__["__signature__"] = self.__signature__
        return method


def _checked_base_url(base_url: str) -> str:
    """``base_url``, or ValueError naming it when no request can go below it: without a scheme
    (``localhost:8181``) each call was retried with backoff and then failed as a connection error
    ("UnsupportedProtocol"); an unparsable one (``http://[::1``) raised httpx's InvalidURL."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as e:
        raise ValueError(f"invalid base_url {base_url!r}: {e}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"invalid base_url {base_url!r}: expected http://HOST[:PORT][/PATH] or https://...")
    return base_url


class ClientBase(Generic[H]):
    """The state of a client over the httpx client ``H``, and every method that sends one call (its
    request, parser and error map are in :mod:`service.client.calls`)."""

    health = route(calls.health)
    metrics = route(calls.metrics)
    list_namespaces = route(calls.list_namespaces)
    create_namespace = route(calls.create_namespace)
    load_namespace = route(calls.load_namespace)
    drop_namespace = route(calls.drop_namespace)
    list_tables = route(calls.list_tables)
    create_table = route(calls.create_table)
    load_table = route(calls.load_table)
    drop_table = route(calls.drop_table)
    commit = route(calls.commit)
    commit_paths = route(calls.commit_paths)
    commit_prefixes = route(calls.commit_prefixes)
    commit_files = route(calls.commit_files)
    remove_files = route(calls.remove_files)
    list_files = route(calls.list_files)
    file_stats = route(calls.file_stats)
    table_stats = route(calls.table_stats)
    list_snapshots = route(calls.list_snapshots)
    plan = route(calls.plan)

    def __init__(
        self,
        base_url: str | None,
        token: str | None,
        *,
        retries: int,
        backoff: float,
        http: H | None,
        open_http: Callable[..., H],
    ) -> None:
        """``http``: the httpx client to send with, else one opened by
        ``open_http(base_url=base_url)`` (and closed with this client)."""
        self._retry = RetryPolicy(retries, backoff)
        self._base_url = None if base_url is None else _checked_base_url(base_url)
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._owns_http = http is None
        if http is None:
            if base_url is None:
                raise ValueError("base_url is required")
            http = open_http(base_url=base_url)
        self._http: H = http
        #: The newest snapshot this client's writes made or its reads were answered at: plans,
        #: listings and table loads ask for at least it (``min-snapshot-id``), so a server reading
        #: from hot standbys answers them with this client's writes in, and what it sees never
        #: goes back, whichever server answers (read your writes, monotonic reads).
        self.last_snapshot_id: int | None = None

    @property
    def base_url(self) -> str | None:
        """The service URL given at construction (None: the ``http`` client's own base)."""
        return self._base_url

    def _done(self, call: Call[T], result: T) -> T:
        """``result`` of ``call``, after noting the snapshot it is at."""
        if call.at_snapshot is not None:
            snap = call.at_snapshot(result)
            if snap is not None and (self.last_snapshot_id is None or snap > self.last_snapshot_id):
                self.last_snapshot_id = snap
        return result

    def _request(self, call: Call[Any]) -> httpx.Request:
        call = call.with_min_snapshot(self.last_snapshot_id)
        # With a base URL, requests go below it even through an ``http`` client of another base;
        # without one, the ``http`` client's own base URL applies.
        url = call.path if self._base_url is None else self._base_url.rstrip("/") + call.path
        headers = {**self._auth, **call.headers}
        if call.json is not None:
            # Named here: httpx's own yields to a Content-Type among the ``http`` client's headers.
            headers["Content-Type"] = "application/json"
        return self._http.build_request(call.method, url, params=call.params, json=call.json, headers=headers)

    def _wait_after_error(self, call: Call[Any], attempt: int, exc: httpx.TransportError) -> float:
        """The wait before the next attempt; ShredcatConnectionError when there is none."""
        wait = self._retry.after_error(exc, attempt, idempotent=call.idempotent)
        if wait is None:
            raise ShredcatConnectionError(f"{call.method} {call.path}: {type(exc).__name__}: {exc}") from exc
        return wait

    def _wait_after_response(self, call: Call[Any], attempt: int, r: httpx.Response) -> float | None:
        """The wait before the next attempt; None when ``r`` is the final answer."""
        return self._retry.after_response(r, attempt, idempotent=call.idempotent)
