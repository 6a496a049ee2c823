"""The log validator behind `sessionspec validate`: an exact checker and an accept-fast pass.

`logread` reads a damaged log without raising, `jsondiag` locates JSON anomalies,
`lint` applies the levels; `fastlog` proves a clean log clean with types and
predicates generated from the spec's schemas (`mstypes`, `fastschema`,
`schemavary`). The CLI command lives beside this package (`sessionspec.validate`).
"""
