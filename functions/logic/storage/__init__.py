"""Use cases of storage: volumes (`volumes`) and the data a workload reads and writes (`data`)."""
