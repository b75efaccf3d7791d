"""What a GTP command handler may raise or return, shared by the server (`gtp.server`) and its command sets
(`gtp.analysis_commands`)."""

from __future__ import annotations


class GTPFailure(Exception):
    """A command failed; the message is the `?` answer's text."""


class RawResponse(str):
    """A handler's answer that goes out as it is: the handler wrote its own `=[id]` head (`begin_raw`) and
    perhaps lines after it; this text ends the answer (or, empty, leaves it open for a stream)."""
