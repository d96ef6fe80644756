"""namespace.create and namespace.delete: a PodStart namespace with its Secrets Role and its data volume.

namespace.create: `namespace` (the labelled Namespace, the Role and RoleBinding of the API function's group,
watched to Active), then `data_volume` (a PersistentVolume on the data bucket and its `podstart-data` claim,
watched to Bound). A namespace of that name PodStart did not create fails the operation (it is never adopted).
namespace.delete: `namespace` (the Namespace is deleted: the API server removes everything in it), then `gone`
(watched until the API server no longer has it; then its data volume's PersistentVolume, which is cluster-wide,
is deleted: the bucket and its objects stay).
"""

from __future__ import annotations

from functions.adapters.kube import KubeCluster
from functions.domain.errors import PermanentStepError
from functions.domain.namespaces import models as nsd
from functions.domain.storage.volumes import is_podstarts
from functions.domain.tenancy import is_managed, system_namespace
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows.context import StepContext, Workflow

ACTIVE_SECONDS = 5.0
BIND_SECONDS = 15.0
DELETE_SECONDS = 30.0


def _kube(ctx: StepContext) -> KubeCluster:
    r = ctx.request
    return KubeCluster.for_eks(r["eks_cluster_name"], r["region"])


def _name(ctx: StepContext) -> str:
    name = str(ctx.request["name"])
    if system_namespace(name):  # the API refused it; a stored request is checked again before any write
        raise PermanentStepError("SystemNamespace", system_namespace(name) or name)
    return name


def create_namespace(ctx: StepContext) -> Outcome:
    name, kube = _name(ctx), _kube(ctx)
    found = kube.get("v1", "Namespace", name)
    if found is not None and not is_managed(found):
        raise PermanentStepError("NotPodStarts", f"namespace {name} exists and was not created by PodStart: it is "
                                                 f"never adopted; choose another name")
    for m in [nsd.namespace_object(name), *nsd.access_objects(name)]:
        kube.apply(m)
    phase = ((kube.get("v1", "Namespace", name) or {}).get("status") or {}).get("phase") or "Active"
    if phase != "Active":
        return Wait(message=f"namespace {name} is {phase}", expected_seconds=ACTIVE_SECONDS)
    return Done(message=f"namespace {name} Active; PodStart may write Secrets there (Role {nsd.rbac.SECRETS_ROLE})")


def create_data_volume(ctx: StepContext) -> Outcome:
    name, kube = _name(ctx), _kube(ctx)
    bucket = ctx.request.get("bucket") or ctx.settings.data_bucket
    objs = nsd.data_volume(bucket, ctx.request["region"], name)
    if not ctx.outputs.get("volume_applied"):
        for m in objs:
            found = kube.get(m["apiVersion"], m["kind"], m["metadata"]["name"], m["metadata"].get("namespace"))
            if found is not None and not is_podstarts(found):
                raise PermanentStepError("NotPodStarts", f"{m['kind']} {m['metadata']['name']} exists and was not "
                                                         f"made by PodStart")
        for m in objs:
            kube.apply(m)
        ctx.record(volume_applied=True)
    pvc = kube.get("v1", "PersistentVolumeClaim", objs[1]["metadata"]["name"], name) or {}
    phase = (pvc.get("status") or {}).get("phase") or "Pending"
    if phase != "Bound":
        return Wait(message=f"PVC {name}/{objs[1]['metadata']['name']} is {phase}", expected_seconds=BIND_SECONDS)
    return Done(message=f"PVC {name}/{objs[1]['metadata']['name']} Bound to {objs[0]['metadata']['name']} "
                        f"(s3://{bucket}, /data in pods)")


def delete_namespace(ctx: StepContext) -> Outcome:
    name, kube = _name(ctx), _kube(ctx)
    found = kube.get("v1", "Namespace", name)
    if found is None:
        return Done(message=f"namespace {name} is already gone")
    if not is_managed(found):
        raise PermanentStepError("NotPodStarts", f"namespace {name} was not created by PodStart: not deleted")
    if not (found.get("metadata") or {}).get("deletionTimestamp"):
        kube.delete("v1", "Namespace", name)
    return Done(message=f"namespace {name} deleted: the API server removes everything in it")


def namespace_gone(ctx: StepContext) -> Outcome:
    name, kube = _name(ctx), _kube(ctx)
    if kube.get("v1", "Namespace", name) is not None:
        return Wait(message=f"namespace {name} is Terminating", expected_seconds=DELETE_SECONDS)
    pv = kube.get("v1", "PersistentVolume", nsd.pv_name(name))
    if pv is not None and is_podstarts(pv):
        kube.delete("v1", "PersistentVolume", nsd.pv_name(name))
    return Done(message=f"namespace {name} is gone, with its data volume {nsd.pv_name(name)} (the data bucket and "
                        f"its objects stay)")


CREATE = Workflow(kind="namespace.create", steps={"namespace": create_namespace, "data_volume": create_data_volume})
DELETE = Workflow(kind="namespace.delete", steps={"namespace": delete_namespace, "gone": namespace_gone})
