"""Every Kubernetes object PodStart applies validates against the upstream schemas."""

from __future__ import annotations

import kubernetes_validate
import pytest

from functions.assets import download_script, gate_script
from functions.domain import manifests
from functions.domain.features import kuberay
from functions.domain.inference import manifests as inference_manifests
from functions.domain.inference.requests import DOWNLOAD_IMAGE, download_job_name
from functions.domain.namespaces import models as namespaces
from functions.domain.storage import volumes as storage
from tests.reference import CRDS, load_crd

K8S_VERSION = "1.33"
OBJECTS = [*manifests.dependency_components("us-west-2"), *manifests.s3_volume("bucket", "us-west-2"),
           *manifests.fsx_volume("fs-1", "fs-1.fsx.us-west-2.amazonaws.com", "abcd", 1200),
           # storage.add: a volume added after create, in the namespace the user names
           storage.namespace_object("ml"), storage.s3_service_account("train", "ml"),
           *storage.s3_volume("c1", "train", "ml", "datasets", "train/", "us-west-2", read_only=True),
           *storage.fsx_volume("c1", "scratch", "ml", "fs-2", "fs-2.fsx.us-west-2.amazonaws.com", "efgh", 2400),
           # instance_group.delete's drain: one Eviction per pod
           manifests.eviction("trainer-0", "ml"),
           # namespace.create: the Namespace, the API function's Secrets Role and binding, the data volume
           namespaces.namespace_object("team-a"), *namespaces.access_objects("team-a"),
           *namespaces.data_volume("podstart-data", "us-west-2", "team-a"),
           # an endpoint's API key gate script
           inference_manifests.gate_configmap(gate_script()),
           # model.download: the downloader's identity and script, and its Job (with and without a token Secret)
           inference_manifests.downloader_service_account(),
           inference_manifests.download_script_configmap(download_script()),
           *(inference_manifests.download_job(name=download_job_name("org/m", "main"), model_id="org/m",
                                              revision="main", bucket="podstart-data", prefix="models/org/m/main/",
                                              region="us-west-2", token_secret=t, image=DOWNLOAD_IMAGE)
             for t in ("hf-token", None))]


@pytest.mark.parametrize("obj", OBJECTS, ids=[f"{o['kind']}/{o['metadata']['name']}" for o in OBJECTS])
def test_object_validates_against_kubernetes_schema(obj: dict) -> None:
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_pvc_is_bound_to_its_volume_by_name() -> None:
    pv, pvc = manifests.s3_volume("bucket", "us-west-2")
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
    assert pv["spec"]["claimRef"]["name"] == pvc["metadata"]["name"]
    assert pv["spec"]["csi"]["volumeAttributes"]["bucketName"] == "bucket"


def test_daemonset_ready_needs_every_scheduled_pod_ready() -> None:
    ds = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "desiredNumberScheduled": 3,
                                                    "numberReady": 2}}
    assert not manifests.daemonset_ready(ds)
    ds["status"]["numberReady"] = 3
    assert manifests.daemonset_ready(ds)
    assert not manifests.daemonset_ready(None)


# -- the kuberay_operator feature: what it server-side applies -------------------------------------
KUBERAY = [*kuberay.operator_objects(), *kuberay.crds()]


@pytest.mark.parametrize("obj", KUBERAY, ids=[f"kuberay:{o['kind']}/{o['metadata']['name']}" for o in KUBERAY])
def test_every_object_the_kuberay_feature_applies_validates(obj: dict) -> None:
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


@pytest.mark.parametrize("plural", kuberay.CRD_PLURALS)
def test_the_shipped_kuberay_crds_are_the_upstream_v1_7_0_ones_unchanged(plural: str) -> None:
    file = f"kuberay_v1.7.0_{plural}.yaml"
    if not (CRDS / file).exists():
        pytest.skip(f"{CRDS / file} is not on this machine")
    assert kuberay.crd(plural) == load_crd(file)


def test_the_kuberay_operator_runs_pinned_non_root_with_least_privilege() -> None:
    dep = next(o for o in kuberay.operator_objects() if o["kind"] == "Deployment")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "quay.io/kuberay/operator:v1.7.0"  # the release of the CRDs, pinned by tag
    assert c["securityContext"]["allowPrivilegeEscalation"] is False and c["securityContext"]["capabilities"] == {
        "drop": ["ALL"]}
    role = next(o for o in kuberay.operator_objects() if o["kind"] == "ClusterRole")
    assert all("*" not in r["verbs"] and "*" not in r["resources"] and "*" not in r["apiGroups"]
               for r in role["rules"])
    assert not any(g.endswith("openshift.io") for r in role["rules"] for g in r["apiGroups"])
    # disable removes the operator, never the CRDs (deleting a CRD deletes every object of its kind)
    assert {o["kind"] for o in kuberay.removed_on_disable()} == {
        "Deployment", "RoleBinding", "Role", "ClusterRoleBinding", "ClusterRole", "ServiceAccount"}
