"""Use cases of specs: apply (`apply`), the diff against the live cluster (`diff`) and the live reads (`live`)."""
