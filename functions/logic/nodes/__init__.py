"""Use cases of nodes: views and actions (reboot, replace, delete, health checks)."""
