"""AWS Signature Version 4: pure functions, no I/O. Used for S3 requests without a body, and
for STS ``AssumeRole`` (a form body, service ``sts``).

The algorithm of the AWS documentation ("Create a signed AWS API request"): a canonical request
(method, URI-encoded path, sorted query, signed headers, payload hash), a string to sign with the
credential scope ``date/region/service/aws4_request``, and an HMAC-SHA256 chain from the secret
key. Paths are encoded once: S3's rule, and the same for the root path STS is called at. Checked
against botocore's signer in tests/storage/test_sigv4.py and against moto with IAM enforced.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

#: sha256 of the empty payload: every request signed here has no body.
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
ALGORITHM = "AWS4-HMAC-SHA256"


@dataclass(frozen=True, slots=True)
class Credentials:
    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


def uri_encode(s: str, *, keep_slash: bool) -> str:
    """RFC 3986 encoding as SigV4 specifies: everything but ``A-Za-z0-9-._~`` (and ``/`` in a path)."""
    return quote(s, safe="/~" if keep_slash else "~")


def canonical_query(params: Sequence[tuple[str, str]]) -> str:
    return "&".join(f"{uri_encode(k, keep_slash=False)}={uri_encode(v, keep_slash=False)}" for k, v in sorted(params))


def signing_key(secret: str, date: str, region: str, service: str = "s3") -> bytes:
    k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


def sign(
    method: str,
    host: str,
    encoded_path: str,
    params: Sequence[tuple[str, str]],
    creds: Credentials,
    region: str,
    amz_date: str,
    *,
    key: bytes | None = None,
    extra_headers: Mapping[str, str] | None = None,
    service: str = "s3",
    payload_sha256: str = EMPTY_SHA256,
    payload_header: bool = True,
) -> dict[str, str]:
    """The headers that sign a body-less request: ``x-amz-date``, ``x-amz-content-sha256``,
    ``x-amz-security-token`` (with a session token) and ``Authorization``. ``encoded_path`` is
    the path exactly as sent (already :func:`uri_encode`-d); ``host`` as the Host header carries
    it (with a non-default port); ``amz_date`` is ``YYYYMMDDTHHMMSSZ``; ``key`` a cached
    :func:`signing_key` of that date; ``extra_headers`` more headers to sign (lower-case names);
    ``payload_sha256`` the hex sha256 of the body, for a request with one; ``payload_header``
    False leaves out the ``x-amz-content-sha256`` header, which only S3 requires (a request
    serialized for someone else to send, in the shape they expect)."""
    date = amz_date[:8]
    headers = {"host": host, "x-amz-date": amz_date}
    if payload_header:
        headers["x-amz-content-sha256"] = payload_sha256
    if creds.session_token:
        headers["x-amz-security-token"] = creds.session_token
    if extra_headers:
        headers.update(extra_headers)
    names = sorted(headers)
    signed = ";".join(names)
    canonical = "\n".join(
        [
            method,
            encoded_path,
            canonical_query(params),
            "".join(f"{n}:{' '.join(headers[n].split())}\n" for n in names),
            signed,
            payload_sha256,
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = f"{ALGORITHM}\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    k = key if key is not None else signing_key(creds.secret_key, date, region, service)
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    out = {n: v for n, v in headers.items() if n != "host"}
    out["authorization"] = f"{ALGORITHM} Credential={creds.access_key}/{scope}, SignedHeaders={signed}, Signature={signature}"
    return out
