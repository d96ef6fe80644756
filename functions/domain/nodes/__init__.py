"""Nodes: the node views and actions (`models`), deep health checks (`health_checks`) and the nodes.* planner
(`plan`). Other capabilities import `api` only."""
