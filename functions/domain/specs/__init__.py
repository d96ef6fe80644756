"""Specs: the declarative document of a cluster and what it holds (`document`: it names every other capability's
request models, through their `api`) and the spec.apply planner (`plan`)."""
