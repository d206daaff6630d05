"""A commit as a pipeline of named steps (:meth:`service.catalog.Catalog.commit` drives it).

Outside any transaction, :func:`~.request.check_request` validates the request and prepares its
rows (:class:`~.request.CommitRequest`). Inside the commit's transaction, :func:`~.steps.run` takes
the steps of :mod:`.steps` in order: resolve the table and the batch's partition layout, replay
an idempotency key, validate against the table's layout, detect conflicts, restate, write the
snapshot, merge the global stats, record the result under the key. Each step is a function with
typed input and output; none holds state of its own.

Only write paths import this package: the read-only commands never load it.
"""

from service.catalog.commit.request import CommitRequest, check_request
from service.catalog.commit.steps import live_or_missing, run

__all__ = ["CommitRequest", "check_request", "live_or_missing", "run"]
