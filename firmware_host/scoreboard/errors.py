"""Clear JSON errors for the API: every refused request says why, and changes nothing.

A move the rules engine refuses is said in the language of the page that sent it, with the
engine's code and values beside the sentence (``"rule": {"code": ..., "values": {...}}``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from firmware_host.hub import HubError, Refusal
from firmware_host.rules import RuleError
from firmware_host.scoreboard.i18n import page_language
from firmware_host.scoreboard.texts import REFUSALS


class ApiError(Refusal):
    """A refused API request: HTTP status, a short machine code (``bad_input``, ``login``...)
    and the sentence that says why, as a code of `firmware_host.scoreboard.texts` and its
    values (said in the page's language)."""

    texts = REFUSALS

    def __init__(self, status: int, code: str, text: str,
                 headers: dict[str, str] | None = None, **values: Any) -> None:
        super().__init__(text, **values)
        self.status = status
        self.kind = code
        self.headers = headers or {}


def error_response(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Response:
    response = jsonify({"error": message, "code": code, "status": status, **(extra or {})})
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(err: ApiError) -> Response:
        return error_response(err.status, err.kind, err.text(page_language()), err.headers)

    @app.errorhandler(RuleError)
    def rule_error(err: RuleError) -> Response:
        # The engine refused the input and guarantees its state is unchanged.
        return error_response(400, "rule", err.text(page_language()),
                              extra={"rule": err.as_text()})

    @app.errorhandler(HubError)
    def hub_error(err: HubError) -> Response:
        return error_response(409, "conflict", err.text(page_language()))

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException) -> Any:
        if not is_api_path(request.path):
            return err  # the pages and their files keep Flask's HTML errors
        return error_response(err.code or 500, err.name.lower().replace(" ", "_"), err.description)


def is_api_path(path: str) -> bool:
    """Whether `path` is under /api as written or as a browser would resolve it.

    So ``/api`` itself, ``//api/x``, ``/static/../api/x`` and ``/api/../x`` all answer the
    API's JSON errors.
    """
    merged = re.sub("/+", "/", "/" + path)
    return any(
        candidate == "/api" or candidate.startswith("/api/")
        for candidate in (merged, posixpath.normpath(merged))
    )
