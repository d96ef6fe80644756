"""Training: a job submit's models and admission rules (`jobs`), the recipes that turn its parameters into a
command (`recipes`), the objects it applies (the HyperPodPyTorchJob or RayJob and what goes with it), MLflow tracking
(`mlflow`) and the job.submit/job.delete planner (`plan`). Other capabilities import `api` only."""
