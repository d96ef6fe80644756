"""Step implementations per operation kind: idempotent "ensure" functions over injected adapters."""
