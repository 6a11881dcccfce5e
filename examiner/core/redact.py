"""Credentials never leave the process: user-info and token query parameters are cut out of URLs.

An endpoint's `base_url` may carry a password (`http://user:secret@host/v1`) or a token in its query
(`?api_key=...`, `?sig=...`). The gateway connects with the full URL, but everything examiner writes or
prints goes through this module first: config.yaml, request.json, run.json and the ledger, the
reports, `examiner models`, error messages, and every log line (`install_log_filter` puts a filter on
the root logger's handlers, so httpx, openai and urllib3 lines at `-v` are redacted too).

A redacted URL keeps its scheme, host, port, path and the names of its parameters, so a reader still
sees which server was meant: `http://user:secret@host/v1?key=abc&x=1` becomes
`http://***@host/v1?key=***&x=1`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from examiner.core.plain_text import visible_controls

MASK = "***"
"""What stands in for a removed credential."""

SECRET_PARAMETERS = ("key", "api_key", "apikey", "api-key", "token", "access_token", "refresh_token", "id_token",
                     "auth", "auth_token", "authorization", "sig", "signature", "password", "passwd", "pwd",
                     "secret", "client_secret", "credential", "credentials", "session", "sessionid", "code",
                     "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature",
                     "x-goog-credential")
"""Query parameter names (case-insensitive) whose values are credentials; a name that ends in one of
`_key`, `_token`, `_secret`, `-key`, `-token`, `-secret`, `password` counts too."""

_SECRET_SUFFIXES = ("_key", "-key", "_token", "-token", "_secret", "-secret", "password", "_sig", "signature")

# scheme://user-info@ : the user-info is everything up to the last '@' before the host's end.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#'\"<>\\]+)@")
# ?name=value or &name=value (also ;name=value); the value ends at &, #, whitespace, a quote or a bracket.
_PARAMETER = re.compile(r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&#;\s'\"<>\\)\]]*)")
# A bearer token written out in a header dump or an error message.
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*")


def _secret_name(name: str) -> bool:
    lowered = name.lower()
    return lowered in SECRET_PARAMETERS or lowered.endswith(_SECRET_SUFFIXES)


def _mask_parameter(match: re.Match[str]) -> str:
    if not _secret_name(match["name"]) or not match["value"] or match["value"] == MASK:
        return match[0]
    return f"{match['lead']}{match['name']}={MASK}"


def redact_text(text: str) -> str:
    """`text` with the user-info of every URL in it, the values of token-like query parameters and
    bearer tokens replaced by `***`; text without them comes back unchanged (the same object)."""
    if not text or ("@" not in text and "=" not in text and "earer" not in text):
        return text
    out = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text) if "://" in text else text
    if "=" in out:
        out = _PARAMETER.sub(_mask_parameter, out)
    if "earer" in out:
        out = _BEARER.sub(lambda m: f"{m[1]}{MASK}", out)
    return out


def redact_url(url: str | None) -> str | None:
    """One URL without its credentials (None stays None)."""
    return None if url is None else redact_text(url)


def has_credentials(url: str | None) -> bool:
    """Whether a URL carries user-info or a token-like query parameter."""
    return bool(url) and redact_text(str(url)) != url


def url_userinfo(url: str) -> str:
    """The user-info part of a URL ('' when none)."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return ""
    return netloc.rpartition("@")[0]


def redact_data(value: object) -> object:
    """A copy of a JSON-like value (mappings, lists, strings) with `redact_text` applied to every string."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {key: redact_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """A handler filter that redacts each record's message, arguments and traceback text in place, and
    shows their control characters as visible escapes (a message names a document, a target or an error
    text someone else wrote: no terminal sequence of theirs reaches the user's terminal or log).

    Put on handlers (not loggers): records of every library's loggers reach the root logger's handlers
    (httpx logs each request's URL at INFO, openai its options at DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record: let the handler report it as usual
            return True
        cleaned = visible_controls(redact_text(message))
        if cleaned is not message and cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = visible_controls(redact_text(record.exc_text))
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        return True


_FILTER = RedactingFilter()


def install_log_filter(logger: logging.Logger | None = None) -> None:
    """Put the redacting filter on every handler of `logger` (default: the root logger), once each."""
    for handler in (logger or logging.getLogger()).handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)


def redacting_filter() -> RedactingFilter:
    """The one filter instance (for a handler added later, e.g. a run's log file)."""
    return _FILTER


__all__ = ["MASK", "RedactingFilter", "SECRET_PARAMETERS", "has_credentials", "install_log_filter", "redact_data",
           "redact_text", "redact_url", "redacting_filter", "url_userinfo"]
