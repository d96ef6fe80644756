"""Use cases of training: job submit, reads, logs and delete (`jobs`), MLflow tracking servers (`mlflow_servers`)."""
