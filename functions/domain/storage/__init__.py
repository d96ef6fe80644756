"""Storage: FSx and S3 volumes registered on a cluster (`volumes`), the data contract every workload's pods see
(`data`: the shared bucket at /data, registered volumes at /s3/<bucket>/) and the storage.* and cluster.reconcile
planner (`plan`). Other capabilities import `api` only."""
