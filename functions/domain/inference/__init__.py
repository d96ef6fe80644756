"""Inference: the endpoint and pool request models and rules (`endpoints`), the vLLM engine arguments
(`engine_args`), the Kubernetes objects of an endpoint, a pool and a model download (`manifests`), PodStart's records of
endpoints and pools (`record`) and the planners of endpoint.*, pool.* and model.download (`plan`). Other capabilities
import `api` only."""
