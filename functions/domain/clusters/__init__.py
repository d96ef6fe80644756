"""Clusters and their instance groups: the request models and admission rules (`models`), PodStart's record of a
cluster (`record`), instance groups and their addresses (`groups`), the network allocator (`network`: subnets, zones,
addresses per instance), software updates (`software_update`), and the planners of cluster.*, instance_group.* and
cluster.software_update (`plan`, `plan_groups`, `plan_software_update`). Other capabilities import `api` only."""
