"""SageMaker HyperPod extension: a faithful cluster store replacing moto's cluster operations.

moto 5.2 drops Orchestrator/NodeRecovery, rejects current instance types, never leaves InService
and cannot paginate nodes. Here clusters keep every request field, move Creating -> InService
(and Updating, Deleting) on the time scale, nodes come and go through realistic statuses, and
training plans, cluster events and EventBridge state-change events exist.

One module per concern: `clusters` (create/describe/list/update/delete and the cluster lifecycle),
`nodes`, `health_checks` (StartClusterHealthCheck),
`software_update` (UpdateClusterSoftware, rolling), `training_plans`, `tags`, `events` (cluster events and
EventBridge state changes), `mlflow` (managed MLflow tracking servers, presigned links, the runs jobs log);
`store` holds the per-region cluster store they share, `common` SageMaker's error shapes and paging.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandbox.aws.sagemaker import clusters, events, health_checks, mlflow, nodes, software_update, tags, training_plans
from sandbox.aws.sagemaker.clusters import fail_cluster
from sandbox.aws.sagemaker.mlflow import seed_tracking_servers
from sandbox.aws.sagemaker.store import HyperPodCluster, HyperPodStore, store
from sandbox.aws.sagemaker.training_plans import seed_training_plans

_OPERATIONS: tuple[Callable[[Any], Any], ...] = (
    clusters.create_cluster,
    clusters.describe_cluster,
    clusters.list_clusters,
    clusters.delete_cluster,
    clusters.update_cluster,
    nodes.batch_delete_cluster_nodes,
    nodes.batch_reboot_cluster_nodes,
    nodes.batch_replace_cluster_nodes,
    nodes.list_cluster_nodes,
    nodes.describe_cluster_node,
    health_checks.start_cluster_health_check,
    software_update.update_cluster_software,
    events.list_cluster_events,
    events.describe_cluster_event,
    training_plans.list_training_plans,
    training_plans.describe_training_plan,
    *mlflow.OPERATIONS,
)


def patch() -> None:
    """Route SageMakerResponse's HyperPod operations to this package's stores."""
    from moto.sagemaker.responses import SageMakerResponse

    from sandbox.aws.sagemaker import plan_offerings  # training plans for sale: search and buy

    for op in (*_OPERATIONS, *plan_offerings.OPERATIONS):
        setattr(SageMakerResponse, op.__name__, op)
    tags.patch()  # ListTags/AddTags/DeleteTags on HyperPod cluster ARNs
    plan_offerings.patch_tags()  # ListTags on the training plans CreateTrainingPlan bought


__all__ = ["HyperPodCluster", "HyperPodStore", "fail_cluster", "patch", "seed_tracking_servers", "seed_training_plans",
           "store"]
