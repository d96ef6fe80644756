"""Use cases behind the REST routes, one module each: admit a request against live state, start its
operation, or build a view. They see ports only (`Deps`); the API wires AWS adapters in, tests fakes."""
