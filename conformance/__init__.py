"""The conformance suite: check any dsh-session implementation through a line protocol.

Module map (``PROTOCOL.md`` is the normative protocol, ``WRITING_AN_ADAPTER.md``
the tutorial):

* ``protocol`` — version, capabilities, the operation table, message
  constructors, validation against ``spec/protocol/*.json``.
* ``wire`` — the JSON text of protocol lines (iterative, any depth).
* ``adapter`` / ``store_script`` — the reference implementation behind the
  protocol; ``reference_adapter`` runs it as a process.
* ``harness`` — connections (in-process, subprocess) and ``Implementation``
  (handshake, seq, timeouts, restart after a crash).
* ``cases`` — the case model, content-hash ids, the vector loader, ``--only``.
* ``compare`` — normalisation (``"<now>"``), structural diffs, verdicts.
* ``runner`` / ``results`` / ``expectations`` — running cases, outcomes,
  known-failure lists.
* ``report`` / ``summary`` / ``trace`` — JSONL and JUnit reports, the human
  summary, replayable traces.
* ``coverage`` — requirements x vectors x properties, and the api-level
  classification of rules no protocol operation can observe.
* ``fuzz`` — the ``--fuzz`` hook into ``machines`` (state machines).
* ``machines`` — differential Hypothesis state machines (``session``,
  ``fork``, ``storage``, ``store``) that compare an implementation with the
  in-process reference request by request; ``COVERAGE`` feeds ``coverage``.
* ``generators`` — the machines' inputs, derived from the event registry,
  the schemas and the constants (never a restated vocabulary).
* ``mutants`` — deliberately broken references, one rule each, served as
  adapters (``python -m sessionspec.conformance.mutants NAME``, ``--list``,
  ``--check``; ``check(name)`` reports what caught one).
* ``authoring`` — drafting cases from the reference and formatting vector files.
* ``vectors/<area>.json`` — the corpus (package data).
"""
