"""Session cookies carry a nonce (issue 32 row 7): each sign-in's cookie is its own, so revoking
one (sign-out) leaves the others; cookies of the form before nonces verify until they expire."""

from __future__ import annotations

import base64
import hashlib
import hmac

from service.api.auth import hash_token
from service.dashboard.session import SESSION_SECONDS, SessionSigner, cookie_expiry, session_digest

KEY = b"k" * 40
TOKENS = {hash_token("admin-token"): "admin"}


def test_two_sign_ins_in_one_second_get_different_cookies() -> None:
    signer = SessionSigner([KEY])
    a, b = signer.make("admin-token", now=1_000_000), signer.make("admin-token", now=1_000_000)
    assert a != b and session_digest(a) != session_digest(b)
    for value in (a, b):
        p = signer.verify(value, TOKENS, now=1_000_001)
        assert p is not None and p.role == "admin"
        assert cookie_expiry(value) == 1_000_000 + SESSION_SECONDS


def test_a_changed_nonce_or_a_bad_one_is_refused() -> None:
    signer = SessionSigner([KEY])
    value = signer.make("admin-token", now=1_000_000)
    v, expiry, nonce, mac = value.split(".")
    other = "A" * len(nonce)
    for forged in (f"{v}.{expiry}.{other}.{mac}", f"{v}.{expiry}.{nonce}!.{mac}", f"{v}.{expiry}.{mac}",
                   f"{v}.{expiry}.x.{mac}"):
        assert signer.verify(forged, TOKENS, now=1_000_001) is None, forged


def test_cookies_without_a_nonce_still_verify() -> None:
    expiry = 1_000_000 + 3600
    digest = hashlib.sha256(b"admin-token").digest()
    mac = hmac.new(KEY, b"shredcat-dashboard:v2:" + str(expiry).encode() + b":" + digest, hashlib.sha256).digest()
    value = f"v2.{expiry}.{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"
    p = SessionSigner([KEY]).verify(value, TOKENS, now=1_000_000)
    assert p is not None and p.role == "admin" and cookie_expiry(value) == expiry


_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _respelled(value: str) -> list[str]:
    """Other spellings of ``value`` naming the same expiry, nonce and MAC bytes: the expiry with a
    leading zero; the MAC's last character with its lowest bit flipped (of a 32-byte MAC's 43
    characters, the last carries 4 bits: base64 drops its 2 low ones); a character outside the
    alphabet inside the MAC (a lenient decoder skips it)."""
    *head, expiry, mac = value.split(".")
    pre = ".".join(head)
    low_bit = _B64URL[_B64URL.index(mac[-1]) ^ 1]
    return [f"{pre}.0{expiry}.{mac}", f"{pre}.{expiry}.{mac[:-1]}{low_bit}", f"{pre}.{expiry}.{mac[:20]}!{mac[20:]}"]


def test_a_cookie_verifies_in_its_one_spelling_only() -> None:
    """Sign-out revokes a cookie by the digest of its text (:func:`session_digest`): another
    spelling of the same signature would be a different text, not revoked, so only the spelling
    the server made verifies (for v3 and for v2 cookies)."""
    signer = SessionSigner([KEY])
    expiry = 1_000_000 + 3600
    digest = hashlib.sha256(b"admin-token").digest()
    v2_mac = hmac.new(KEY, b"shredcat-dashboard:v2:" + str(expiry).encode() + b":" + digest, hashlib.sha256).digest()
    v2 = f"v2.{expiry}.{base64.urlsafe_b64encode(v2_mac).decode().rstrip('=')}"
    for value in (v2, *(signer.make("admin-token", now=1_000_000) for _ in range(64))):
        assert signer.verify(value, TOKENS, now=1_000_001) is not None
        for other in _respelled(value):
            assert signer.verify(other, TOKENS, now=1_000_001) is None, (value, other)
