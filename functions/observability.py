"""Logger, Tracer and Metrics, set up once for every function."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()  # service name from POWERTOOLS_SERVICE_NAME
tracer = Tracer()
metrics = Metrics(namespace="PodStart")
