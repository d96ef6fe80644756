"""The embedded Kubernetes API's pieces that make kubectl see a real API server, each on its own (no sockets):
protobuf bodies, RBAC decisions, field validation against the OpenAPI schemas, server-side table cells."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sandbox.kube import authz, openapi, tables
from sandbox.kube.errors import ApiError
from sandbox.kube.proto import decode_object
from sandbox.kube.registry import TypeRegistry, types_from_crd
from sandbox.kube.store import ClusterStore

# ------------------------------------------------------------------------------------------------ protobuf


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return b"k8s\x00" + _field(1, type_meta) + _field(2, raw) + _field(3, "") + _field(4, "")


def _meta(name: str, namespace: str = "") -> bytes:
    # ObjectMeta as Go writes it: every non-pointer field, empty or not (generateName 2, namespace 3, ...)
    meta = _field(1, name) + _field(2, "") + _field(3, namespace) + _field(5, "") + _field(6, "") + _field(7, 0)
    return meta + _field(8, b"")  # creationTimestamp: a zero Time


def test_a_secret_decodes_to_the_json_kubectl_meant() -> None:
    # Given the body `kubectl create secret generic creds --from-literal=token=s3cr3t` sends
    entry = _field(1, "token") + _field(2, b"s3cr3t")
    raw = _field(1, _meta("creds", "ml")) + _field(2, entry) + _field(3, "Opaque")
    # When it is decoded
    secret = decode_object(_envelope("v1", "Secret", raw))
    # Then it is what the JSON body would have been: bytes in base64, Go's empty fields and zero time left out
    assert secret == {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "ml"},
                      "data": {"token": base64.b64encode(b"s3cr3t").decode()}, "type": "Opaque"}


def test_pointer_zeros_stay_int_or_string_and_inlined_structs_are_json_shaped() -> None:
    # A Deployment with replicas 0 (a pointer: zero is a choice) and a container with a port
    port = _field(3, 80) + _field(4, "TCP")  # containerPort, protocol
    container = _field(1, "web") + _field(2, "nginx:1.27") + _field(6, port) + _field(16, 0)  # stdin false
    pod_spec = _field(2, container)
    template = _field(1, _meta("")) + _field(2, pod_spec)
    spec = _field(1, 0) + _field(3, template)  # replicas 0
    body = _envelope("apps/v1", "Deployment", _field(1, _meta("web", "ml")) + _field(2, spec))
    dep = decode_object(body)
    assert dep["spec"]["replicas"] == 0
    assert dep["spec"]["template"]["spec"]["containers"] == [
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]
    # IntOrString and an inlined struct: a PodDisruptionBudget's minAvailable, an Ingress rule's http
    pdb = decode_object(_envelope("policy/v1", "PodDisruptionBudget",
                                  _field(1, _meta("web")) + _field(2, _field(1, _field(1, 1) + _field(3, "50%")))))
    assert pdb["spec"]["minAvailable"] == "50%"
    path = _field(1, "/") + _field(2, _field(4, _field(1, "svc") + _field(2, _field(2, 8080))))
    rule = _field(1, "ml.example.com") + _field(2, _field(1, _field(1, path)))
    ingress = decode_object(_envelope("networking.k8s.io/v1", "Ingress", _field(1, _meta("ing")) +
                                      _field(2, _field(3, rule))))
    assert ingress["spec"]["rules"][0] == {"host": "ml.example.com", "http": {"paths": [
        {"path": "/", "backend": {"service": {"name": "svc", "port": {"number": 8080}}}}]}}


def test_a_body_that_is_not_kubernetes_protobuf_is_a_clear_400() -> None:
    with pytest.raises(ApiError) as bad:
        decode_object(b'{"kind": "Secret"}')
    assert bad.value.code == 400 and "magic" in bad.value.message
    with pytest.raises(ApiError) as unknown:
        decode_object(_envelope("example.com/v1", "Widget", b""))
    assert unknown.value.code == 415 and "Widget" in unknown.value.message


# ------------------------------------------------------------------------------------------------ RBAC


@pytest.fixture
def store() -> ClusterStore:
    s = ClusterStore("unit")
    s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    return s


def _grant(store: ClusterStore, namespace: str, user: str, rules: list[dict[str, Any]],
           cluster_role: bool = False) -> None:
    role_kind = "ClusterRole" if cluster_role else "Role"
    meta: dict[str, Any] = {"name": f"{user}-role"} | ({} if cluster_role else {"namespace": namespace})
    store.create({"apiVersion": authz.RBAC, "kind": role_kind, "metadata": meta, "rules": rules})
    store.create({"apiVersion": authz.RBAC, "kind": "RoleBinding",
                  "metadata": {"name": f"{user}-binding", "namespace": namespace},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": f"{user}-role"},
                  "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]})


def test_the_cluster_creator_is_cluster_admin_through_the_default_binding(store: ClusterStore) -> None:
    allowed, reason = authz.authorize(store, authz.ADMIN, authz.Attributes("delete", "apps", "deployments",
                                                                           namespace="ml"))
    assert allowed and reason == ('RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole '
                                  '"cluster-admin" to Group "system:masters"')
    # without the binding, nothing grants it: the answer comes from the cluster's RBAC, not from a constant
    store.delete(authz.RBAC, "ClusterRoleBinding", "cluster-admin")
    assert authz.authorize(store, authz.ADMIN, authz.Attributes("delete", "apps", "deployments",
                                                                namespace="ml")) == (False, "")


def test_a_role_binding_grants_its_namespace_only_and_names_resources(store: ClusterStore) -> None:
    alice = authz.User("alice", ("system:authenticated",))
    _grant(store, "ml", "alice", [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                                  {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["hf-token"],
                                   "verbs": ["get"]}])
    assert authz.authorize(store, alice, authz.Attributes("list", "", "pods", namespace="ml"))[0]
    assert authz.authorize(store, alice, authz.Attributes("get", "", "pods", "log", "p1", "ml"))[0]
    assert not authz.authorize(store, alice, authz.Attributes("list", "", "pods", namespace="default"))[0]
    assert not authz.authorize(store, alice, authz.Attributes("delete", "", "pods", namespace="ml"))[0]
    assert authz.authorize(store, alice, authz.Attributes("get", "", "secrets", name="hf-token", namespace="ml"))[0]
    assert not authz.authorize(store, alice, authz.Attributes("get", "", "secrets", name="other", namespace="ml"))[0]
    # discovery is every authenticated user's (system:discovery), other paths are not
    assert authz.authorize(store, alice, authz.Attributes("get", path="/apis/apps/v1"))[0]
    assert not authz.authorize(store, alice, authz.Attributes("get", path="/metrics"))[0]
    forbidden = authz.forbidden(alice, authz.Attributes("list", "", "pods", namespace="default"))
    assert forbidden.code == 403 and forbidden.message == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"')


def test_a_cluster_role_bound_in_a_namespace_and_service_account_subjects(store: ClusterStore) -> None:
    _grant(store, "ml", "bob", [{"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["*"]}], cluster_role=True)
    bob = authz.User("bob", ("system:authenticated",))
    assert authz.authorize(store, bob, authz.Attributes("patch", "apps", "deployments", "scale", namespace="ml"))[0]
    assert not authz.authorize(store, bob, authz.Attributes("patch", "apps", "deployments", namespace="ml"))[0]
    store.create({"apiVersion": authz.RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": "sa-view"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                  "subjects": [{"kind": "ServiceAccount", "name": "trainer", "namespace": "ml"}]})

    class Headers(dict[str, str]):
        def get_all(self, key: str) -> list[str]:
            return [self[key]] if key in self else []

    sa, impersonating = authz.user_of(Headers({"Impersonate-User": "system:serviceaccount:ml:trainer"}))
    assert impersonating and "system:serviceaccounts:ml" in sa.groups
    assert authz.authorize(store, sa, authz.Attributes("list", "", "pods", namespace="other"))[0]
    rules = authz.review(store, sa, "SelfSubjectRulesReview", {"spec": {"namespace": "ml"}})["status"]
    assert any("pods" in r["resources"] and r["verbs"] == ["get", "list", "watch"] for r in rules["resourceRules"])


# ------------------------------------------------------------------------------------------------ field validation


def test_unknown_fields_are_named_as_the_api_server_names_them() -> None:
    docs = openapi.Documents([], [])
    pod = TypeRegistry().lookup("", "v1", "pods")
    assert pod is not None
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labelz": {}},
            "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolice": "Always",
                                     "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    with pytest.raises(ApiError) as strict:
        openapi.validate_fields(docs, pod, body, "Strict")
    assert strict.value.code == 400 and strict.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", '
        'unknown field "spec.containers[0].imagePullPolice"')
    kept, warnings = openapi.validate_fields(docs, pod, body, "Warn")
    assert warnings == ['unknown field "metadata.labelz"', 'unknown field "spec.containers[0].imagePullPolice"']
    assert kept["metadata"] == {"name": "p"} and "imagePullPolice" not in kept["spec"]["containers"][0]
    assert kept["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}  # a map keeps its keys
    assert openapi.validate_fields(docs, pod, body, "Ignore") == (kept, [])
    # a strategic merge patch's directives are not fields
    patch = {"spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "c", "$patch": "x"}]}}
    assert openapi.validate_fields(docs, pod, patch, "Strict", patch=True) == (patch, [])


def test_a_crd_schema_prunes_what_it_does_not_declare_unless_it_preserves_it() -> None:
    crd = {"metadata": {"name": "jobs.example.com"},
           "spec": {"group": "example.com", "names": {"kind": "Job", "plural": "jobs"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "steps": {"type": "integer"}, "free": {"type": "object",
                                                                   "x-kubernetes-preserve-unknown-fields": True},
                            "closed": {"type": "object"}}}}}}}]}}
    rt = types_from_crd(crd)[0]
    docs = openapi.Documents([rt], [crd])
    body = {"metadata": {"name": "j"}, "spec": {"steps": 3, "free": {"any": 1}, "closed": {"x": 1}, "typo": 1}}
    kept, warnings = openapi.validate_fields(docs, rt, body, "Warn")
    assert warnings == ['unknown field "spec.closed.x"', 'unknown field "spec.typo"']
    assert kept["spec"] == {"steps": 3, "free": {"any": 1}, "closed": {}}
    v3 = docs.v3("example.com", "v1")
    assert v3 is not None and "com.example.v1.Job" in v3["components"]["schemas"]
    patch_op = v3["paths"]["/apis/example.com/v1/namespaces/{namespace}/jobs/{name}"]["patch"]
    assert patch_op["x-kubernetes-group-version-kind"] == {"group": "example.com", "version": "v1", "kind": "Job"}
    assert "fieldValidation" in {p["name"] for p in patch_op["parameters"]}


def test_the_v3_index_hash_changes_with_the_clusters_crds(store: ClusterStore) -> None:
    published = openapi.Published()
    before = published.v3_index(published.documents(store.registry.all(), []))["paths"]
    assert before["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    from sandbox.kube.addons import crd

    store.create(crd("karpenter.sh", "v1", "NodePool", "nodepools", namespaced=False))
    crds = store.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    after = published.v3_index(published.documents(store.registry.all(), crds))["paths"]
    assert "apis/karpenter.sh/v1" in after and "apis/karpenter.sh/v1" not in before
    assert after["api/v1"] == before["api/v1"]
    assert json.loads(published.v2_bytes(published.documents(store.registry.all(), crds)))["definitions"][
        "sh.karpenter.v1.NodePool"]["x-kubernetes-group-version-kind"][0]["kind"] == "NodePool"


# ------------------------------------------------------------------------------------------------ tables


def _ago(seconds: int) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("seconds", "shown"), [(5, "5s"), (119, "119s"), (150, "2m30s"), (600, "10m"),
                                                (3 * 3600 + 60 * 5, "3h5m"), (30 * 3600, "30h"),
                                                (3 * 86400 + 3600, "3d1h"), (40 * 86400, "40d")])
def test_ages_read_as_kubectl_prints_them(seconds: int, shown: str) -> None:
    assert tables.human_duration(seconds) == shown


def test_pod_status_is_what_holds_it() -> None:
    pending = {"metadata": {}, "status": {"phase": "Pending", "containerStatuses": [
        {"ready": False, "state": {"waiting": {"reason": "ErrImagePull"}}}]}}
    assert tables.pod_status(pending) == "ErrImagePull"
    done = {"metadata": {}, "status": {"phase": "Succeeded", "containerStatuses": [
        {"state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}
    assert tables.pod_status(done) == "Completed"
    going = {"metadata": {"deletionTimestamp": _ago(1)}, "status": {"phase": "Running"}}
    assert tables.pod_status(going) == "Terminating"


def test_node_rows_carry_status_roles_and_version() -> None:
    nodes = TypeRegistry().lookup("", "v1", "nodes")
    assert nodes is not None
    node = {"metadata": {"name": "n1", "creationTimestamp": _ago(300), "labels": {"node-role.kubernetes.io/gpu": ""}},
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.3-eks-473151a"}}}
    t = tables.table(nodes, [node], {}, "None")
    assert [c["name"] for c in t["columnDefinitions"] if c["priority"] == 0] == [
        "Name", "Status", "Roles", "Age", "Version"]
    assert t["rows"][0]["cells"][:5] == ["n1", "Ready,SchedulingDisabled", "gpu", "5m", "v1.32.3-eks-473151a"]


def test_an_autoscaling_v1_hpa_is_stored_as_v2_and_read_back_as_either(store: ClusterStore) -> None:
    registry = store.registry
    v1, v2 = registry.lookup("autoscaling", "v1", "horizontalpodautoscalers"), \
        registry.lookup("autoscaling", "v2", "horizontalpodautoscalers")
    assert v1 is not None and v2 is not None
    store.create_rt(v1, "ml", {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}})
    as_v2 = store.get_rt(v2, "ml", "web")
    assert as_v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    store.patch_rt(v1, "ml", "web", "application/merge-patch+json", b'{"spec": {"targetCPUUtilizationPercentage": 50}}')
    as_v1 = store.get_rt(v1, "ml", "web")
    assert as_v1["apiVersion"] == "autoscaling/v1" and as_v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert "metrics" not in as_v1["spec"]
    assert tables.table(v2, [store.get_rt(v2, "ml", "web")], {}, "None")["rows"][0]["cells"][2] == "cpu: <unknown>/50%"
