"""GET .../features over the stored projection, over fakes: when a read takes only the few live calls, and when
it reads everything (no projection, ?refresh=true, an operation since, the live reads disagree, a feature not at
rest, a projection too old)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.features import document as fdom
from functions.domain.operations import Actor, Target, new_operation
from functions.logic import features
from tests.fakes import World

REGION = "us-west-2"
BASE = {"cert-manager": "ACTIVE", "eks-pod-identity-agent": "ACTIVE"}
KUBERAY = {"metadata": {"labels": {"app.kubernetes.io/version": "v1.7.0"}},
           "status": {"conditions": [{"type": "Available", "status": "True"}]}}


@dataclass
class Reader:
    """A FeatureReader whose live state the test edits; counts full and live reads."""

    addons: dict[str, str] = field(default_factory=lambda: dict(BASE))
    hyperpod: dict[str, Any] = field(default_factory=lambda: {"ClusterStatus": "InService", "InstanceGroups": []})
    kuberay: dict[str, Any] | None = None
    full: int = 0
    live: list[dict[str, bool]] = field(default_factory=list)

    @property
    def bucket(self) -> str:
        return "data"

    def read(self, region: str, cluster: str, eks_name: str, hyperpod_name: str | None) -> fdom.FeatureInputs:
        self.full += 1
        return fdom.FeatureInputs(
            addons={n: {"status": s, "addonVersion": "v1"} for n, s in self.addons.items()},
            associations=(), hyperpod=dict(self.hyperpod), checkpoint_role=None, service_account=None,
            issuer="https://oidc", kuberay_deployment=self.kuberay, kuberay_served=("rayjobs", "rayclusters",
                                                                                      "rayservices"),
            kube_endpoint="https://kube", kube_ca="Y2E=")

    def read_live(self, region: str, eks_name: str, hyperpod_name: str | None, endpoint: str | None,
                  ca: str | None, *, nodes: bool, operator: bool) -> fdom.FeatureVolatile:
        assert (endpoint, ca) == ("https://kube", "Y2E=")  # where the full read found Kubernetes
        self.live.append({"nodes": nodes, "operator": operator})
        return fdom.FeatureVolatile(addon_names=frozenset(self.addons), hyperpod=dict(self.hyperpod),
                                    nodes=() if nodes else None, kuberay_deployment=self.kuberay,
                                    kuberay_read=operator)


def world() -> tuple[World, Reader]:
    w = World()
    w.deps.records.save(ClusterRecord(name="c", region=REGION, status=ClusterStatus.ACTIVE, eks_cluster_name="c",
                                      hyperpod_cluster_name="c", created_by="o", created_at="x"))
    r = Reader()
    w.deps.features = r
    return w, r


def test_a_second_read_takes_only_the_live_calls_and_says_when_the_rest_was_read() -> None:
    w, r = world()
    first = features.read_features(w.deps, "c", REGION)
    again = features.read_features(w.deps, "c", REGION)
    assert (r.full, r.live) == (1, [{"nodes": False, "operator": False}])
    assert again == first and again.cert_manager.status is fdom.FeatureStatus.ACTIVE
    assert again.cert_manager.read_at == first.training_operator.read_at is not None


def test_refresh_reads_everything_and_the_live_calls_follow_kuberay_and_autoscaling() -> None:
    w, r = world()
    r.kuberay = KUBERAY
    features.read_features(w.deps, "c", REGION)
    features.read_features(w.deps, "c", REGION, refresh=True)
    assert (r.full, r.live) == (2, [])
    doc = features.read_features(w.deps, "c", REGION)
    assert doc.kuberay_operator.status is fdom.FeatureStatus.ACTIVE and r.live == [{"nodes": False,
                                                                                    "operator": True}]
    r.kuberay = None  # the operator removed outside PodStart: its Deployment is read live
    assert features.read_features(w.deps, "c", REGION).kuberay_operator.status is fdom.FeatureStatus.DISABLED


def test_an_add_on_made_outside_podstart_or_a_hyperpod_change_reads_everything() -> None:
    w, r = world()
    features.read_features(w.deps, "c", REGION)
    r.addons["metrics-server"] = "ACTIVE"
    assert features.read_features(w.deps, "c", REGION).metrics_server.enabled and r.full == 2
    r.hyperpod["AutoScaling"] = {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}
    features.read_features(w.deps, "c", REGION)
    assert r.full == 3
    assert features.read_features(w.deps, "c", REGION).autoscaling.status is fdom.FeatureStatus.ACTIVE
    assert r.full == 3 and r.live[-1] == {"nodes": True, "operator": False}  # the new settings' projection holds


def test_an_operation_on_the_cluster_since_the_read_reads_everything() -> None:
    w, r = world()
    features.read_features(w.deps, "c", REGION)
    op = new_operation(op_id="op-1", kind="features.update", target=Target(cluster="c", region=REGION),
                       steps=("metrics_server",), request={}, principal=Actor(sub="s", name="s"), idempotency_key=None)
    w.repo.create(op)  # PENDING: PodStart is changing the cluster
    features.read_features(w.deps, "c", REGION)
    features.read_features(w.deps, "c", REGION)
    assert r.full == 3


def test_a_feature_not_at_rest_is_read_in_full_every_time() -> None:
    w, r = world()
    r.addons["metrics-server"] = "CREATING"
    for _ in range(3):
        assert features.read_features(w.deps, "c", REGION).metrics_server.status is fdom.FeatureStatus.CREATING
    assert (r.full, len(r.live)) == (3, 2)


def test_a_projection_older_than_the_max_age_is_read_again() -> None:
    w, r = world()
    features.read_features(w.deps, "c", REGION)
    key = features._key(w.deps.records.load(REGION, "c"))  # type: ignore[arg-type]
    body = w.state.get(*key)
    assert body is not None
    w.state.put(*key, {**body, "read_at": "2020-01-01T00:00:00.000Z"})
    features.read_features(w.deps, "c", REGION)
    assert (r.full, r.live) == (2, [])
