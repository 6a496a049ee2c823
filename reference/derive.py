"""Message derivation: the LLM transcript projected from the surface (DERIVE-1..12).

A message is derived per surface node by :func:`derive_event_message`, a pure
function of one event. :class:`MessageLog` keeps the derived list for a live
session: each node is projected once (O(new nodes) per call), and the list is
rebuilt after a replace (detected by ``replace_generation``). A session
projects each surface node when it commits it (:meth:`MessageLog.project`),
so a derive, the first after a seed-load or the rebuild after a replace,
only gathers already built messages: the cost of the projection is paid once,
spread over the appends, like the TypeScript package whose events already
carry their message.
Messages are :class:`FrozenDict` objects whose content shares the event's
frozen data, so handing them out costs nothing and cannot change the log.

Missing keys in a payload (possible only through an unvalidated live append,
APPEND-15) are omitted from the message rather than written as ``null``,
mirroring the reference's undefined properties (DERIVE-3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sessionspec.spec.schema_types import JsonObject

from .json_value import FrozenDict
from .revision import rules_for
from .rule_table import TABLE, define
from .surface import SurfaceState, fold_surface

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

define("message_deriver", lambda shape: shape.derive)  # DERIVE-2..6: what a message event projects to

__all__ = ["MessageLog", "derive_event_message", "derive_messages"]



_MISSING: Any = object()


def derive_event_message(event: JsonObject, revision: RevisionLike = None) -> FrozenDict | None:
    """The message one event projects to, or ``None`` (DERIVE-2..6).

    At the pinned revision:

    * ``user/message`` / ``steering/message`` -> ``{role: 'user', content}``
    * ``assistant/message`` -> ``{role: 'assistant', content, provenance}``;
      ``None`` when its content is empty (a usage-only step)
    * ``tool/result`` -> ``{role: 'user', content: [{type: 'tool-result',
      toolCallId, content, isError}]}``
    * every other type -> ``None``

    At the published revision a message event projects to the identified
    message it stores. ``revision`` is an id, a release or `Rules`.
    """
    return TABLE.message_deriver(rules_for(revision).messages)(event)  # type: ignore[no-any-return]


def derive_messages(events: Sequence[JsonObject], revision: RevisionLike = None) -> list[FrozenDict]:
    """From-scratch derivation over a whole log (the oracle for :class:`MessageLog`)."""
    rules = rules_for(revision)
    derive = TABLE.message_deriver(rules.messages)
    out = []
    for seq in fold_surface(events, revision=rules)["nodes"]:
        message = derive(events[seq])
        if message is not None:
            out.append(message)
    return out


class MessageLog:
    """Incremental ``derive_messages`` for one live log and its :class:`SurfaceState`.

    ``messages(events, surface)`` takes the log (indexed by seq) and its
    surface state each call. Each call returns a new list (DERIVE-7); the
    messages in it are shared between calls and immutable. ``project(event)``
    builds a committed surface node's message ahead of time (optional: a
    node that was never projected is derived when first gathered).
    """

    __slots__ = ("_cursor", "_derive", "_generation", "_messages", "_projected")

    def __init__(self, revision: RevisionLike = None) -> None:
        self._derive = TABLE.message_deriver(rules_for(revision).messages)
        self._messages: list[FrozenDict] = []
        self._generation = -1
        self._cursor = 0
        self._projected: dict[int, FrozenDict | None] = {}

    def project(self, event: JsonObject) -> None:
        """Build the message of a committed surface node now (the event is frozen, so it cannot go stale).

        Never raises: it runs after a commit, which must not fail (APPEND-1).
        Should the projection fail, the node is simply derived when gathered.
        """
        seq: Any  # (a committed node's seq: an int)
        try:
            seq = event["seq"]
            self._projected[seq] = self._derive(event)
        except Exception:  # noqa: BLE001, S110 - deferred to messages(), which reports it to its caller
            pass

    def messages(self, events: Sequence[JsonObject], surface: SurfaceState) -> list[FrozenDict]:
        """The derived transcript: O(new surface nodes) since the last call, O(n) after a replace."""
        generation = surface.replace_generation
        if generation != self._generation:
            self._messages = []
            self._generation = generation
            seqs: Sequence[int] = surface.nodes
        else:
            seqs = surface.appended_since(self._cursor)
        if seqs:
            append = self._messages.append
            projected = self._projected.get
            for seq in seqs:
                message = projected(seq, _MISSING)
                if message is _MISSING:
                    message = self._derive(events[seq])
                if message is not None:
                    append(message)
        self._cursor = surface.append_cursor()
        return self._messages.copy()
