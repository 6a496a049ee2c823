"""sessionspec: specification, reference implementation and conformance suite for dsh-session logs."""

__version__ = "0.1.0"
SPEC_REVISION = "2f74ac98ba"  # upstream dsh-session revision (seed 003, 2026-07-27) this spec describes
