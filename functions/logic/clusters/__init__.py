"""Use cases of clusters and instance groups: create, import, delete, views, discovery, group add/scale/delete,
software update."""
