"""The SSA IR: types, operations, builder, printer, parser and verifier (see docs/contracts.md)."""
