"""The log validator behind `sessionspec validate`: an exact checker and an accept-fast pass.

The reference's one reader of stored logs (`sessionspec.reference.jsonl_read.load_log`, its every-defect
mode) reads a damaged log without raising (JSON anomalies are located by the
reference parser's hook, `json_text.parse`), `lint` applies the levels; `fastlog` proves a clean log clean with types and
predicates generated from the spec's schemas (`mstypes`, `fastschema`,
`schemavary`). The CLI command lives beside this package (`sessionspec.validate`).
"""
