"""What PodStart's request-path functions may do inside a cluster's Kubernetes API, as RBAC.

The workflows (the steps function) get cluster-admin through their EKS access entry: installing CRDs and
cluster RBAC needs it. The API function only reads (nodes, pods and their logs, jobs, endpoints, pools,
storage), writes Secrets users send for jobs, and POSTs to an endpoint's Service through the API server's
proxy (invoke). Its access entry carries the Kubernetes group `podstart-api` and nothing else; this module is
the one list of what that group may do (a ClusterRole and its binding, applied with the dependencies), and an
evaluator the sandbox uses to refuse, like EKS would, any request of the API function the rules do not allow.

Secrets are not in the ClusterRole: the group may read and write them only in PodStart's namespaces, through a
Role and RoleBinding (`namespace_manifests`) PodStart applies in `default` with the dependencies and in each
namespace it creates (namespace.create). A Secret in kube-system, or in any namespace PodStart did not create,
is out of the API function's reach on the API server itself, whatever the REST API would let through.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

GROUP = "podstart-api"  # the Kubernetes group of the API function's access entry (not system:/eks:/amazon:)
ROLE = "podstart-api"
READ = ["get", "list", "watch"]

RULES: list[dict[str, Any]] = [
    # what the Nodes, Jobs, Endpoints, Pools, Storage and Models pages read
    {"apiGroups": [""], "resources": ["nodes", "pods", "events", "namespaces", "services", "endpoints",
                                      "persistentvolumeclaims", "persistentvolumes", "configmaps", "serviceaccounts"],
     "verbs": READ},
    {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
    # invoke: POST to the endpoint's Service through the API server's proxy
    {"apiGroups": [""], "resources": ["services/proxy"], "verbs": ["create"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "daemonsets", "statefulsets", "replicasets"],
     "verbs": READ},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": READ},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": READ},
    {"apiGroups": ["sagemaker.amazonaws.com"], "resources": ["hyperpodpytorchjobs"], "verbs": READ},
    {"apiGroups": ["ray.io"], "resources": ["rayjobs", "rayclusters", "rayservices"], "verbs": READ},
    {"apiGroups": ["inference.sagemaker.aws.amazon.com"],
     "resources": ["inferenceendpointconfigs", "jumpstartmodels", "sagemakerendpointregistrations"],
     "verbs": READ},
    {"apiGroups": ["keda.sh"], "resources": ["scaledobjects"], "verbs": READ},
    {"apiGroups": ["karpenter.sh"], "resources": ["nodepools", "nodeclaims"], "verbs": READ},
    {"apiGroups": ["karpenter.sagemaker.amazonaws.com"], "resources": ["hyperpodnodeclasses"], "verbs": READ},
    # a reconcile plan checks which of the (Cluster)Roles/Bindings the dependencies apply are there; the namespaces
    # list shows which of PodStart's namespaces have its Secrets Role
    {"apiGroups": ["rbac.authorization.k8s.io"],
     "resources": ["clusterroles", "clusterrolebindings", "roles", "rolebindings"], "verbs": ["get"]},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["list"]},
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list"]},
]


SECRETS_ROLE = "podstart-api-secrets"
# job secrets: written (server-side apply), checked and listed by name, in PodStart's namespaces only. RBAC cannot
# grant names without values; PodStart's client asks for Tables without the objects
# (functions.adapters.kube_http.names), so values never leave the API server, but for an endpoint's API key, which
# invoke reads to authenticate to the engine it deployed.
NAMESPACE_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "create", "patch"]},
]


def namespace_manifests(namespace: str, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The Role of the `podstart-api` group in one of PodStart's namespaces, and its binding."""
    meta = {"namespace": namespace, "labels": dict(labels or {})}
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": SECRETS_ROLE, **meta}, "rules": NAMESPACE_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": SECRETS_ROLE, **meta},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": SECRETS_ROLE},
         "subjects": [{"kind": "Group", "name": GROUP, "apiGroup": "rbac.authorization.k8s.io"}]},
    ]


def manifests(labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The ClusterRole and the binding of the `podstart-api` group to it, and its Role in `default`."""
    meta = {"labels": dict(labels or {})}
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": ROLE, **meta}, "rules": RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": ROLE, **meta},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
         "subjects": [{"kind": "Group", "name": GROUP, "apiGroup": "rbac.authorization.k8s.io"}]},
        *namespace_manifests("default", labels),
    ]


@dataclass(frozen=True)
class Attributes:
    """A resource request as the API server's authorizer sees it (non-resource paths are `resource=None`)."""

    verb: str
    group: str
    resource: str | None
    subresource: str = ""
    path: str = ""
    namespace: str = ""  # of a namespaced request (a Role there may allow it)


# the API server may sit under a path prefix (a proxy's); the Kubernetes path starts at /api or /apis
_CORE = re.compile(r"^(?:/[^/]+)*?/api/v1(?P<rest>/.*)?$")
_GROUPED = re.compile(r"^(?:/[^/]+)*?/apis/(?P<group>[^/]+)/(?P<version>[^/]+)(?P<rest>/.*)?$")
_METHOD_VERB = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def attributes(method: str, url: str) -> Attributes:
    """The authorizer's view of one HTTP request to the API server: verb, API group, resource, subresource."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path
    m = _CORE.match(path)
    group = ""
    if m is None:
        m = _GROUPED.match(path)
        if m is None:
            return Attributes(verb=method.lower(), group="", resource=None, path=path)
        group = m.group("group")
    segments = [s for s in (m.group("rest") or "").split("/") if s]
    namespace = ""
    if len(segments) >= 2 and segments[0] == "namespaces" and len(segments) != 2:
        namespace = segments[1]
        segments = segments[2:]  # /namespaces/{ns}/{resource}...
    if not segments:
        return Attributes(verb=method.lower(), group=group, resource=None, path=path)  # discovery
    resource, name = segments[0], segments[1] if len(segments) > 1 else ""
    sub = segments[2] if len(segments) > 2 else ""
    query = urllib.parse.parse_qs(parts.query)
    if method.upper() == "GET":
        verb = "get" if name else ("watch" if query.get("watch", [""])[0] in ("true", "1") else "list")
    else:
        verb = _METHOD_VERB.get(method.upper(), method.lower())
    return Attributes(verb=verb, group=group, resource=resource, subresource=sub, path=path, namespace=namespace)


def allows(rules: list[dict[str, Any]], attrs: Attributes) -> bool:
    """RBAC's rule match (no wildcards in PodStart's rules, so none here): a non-resource request (discovery)
    is allowed to every authenticated user by `system:discovery`."""
    if attrs.resource is None:
        return attrs.verb == "get"
    wanted = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    return any(attrs.group in r["apiGroups"] and wanted in r["resources"] and attrs.verb in r["verbs"]
               for r in rules)


def bound_rules(roles: list[dict[str, Any]], bindings: list[dict[str, Any]], group: str = GROUP
                ) -> list[dict[str, Any]]:
    """The rules the Roles of one namespace grant `group` through that namespace's RoleBindings."""
    by_name = {r["metadata"]["name"]: r for r in roles}
    out: list[dict[str, Any]] = []
    for b in bindings:
        ref = b.get("roleRef") or {}
        if ref.get("kind") != "Role" or not any(s.get("kind") == "Group" and s.get("name") == group
                                                for s in b.get("subjects") or []):
            continue
        out += list((by_name.get(ref.get("name", "")) or {}).get("rules") or [])
    return out


def refused(method: str, url: str, namespaced: Callable[[str], list[dict[str, Any]]] | None = None) -> str | None:
    """Why the API function's request would be forbidden for the `podstart-api` group, or None. `namespaced`
    gives the rules Roles grant the group in a namespace (the API server's RoleBindings there)."""
    a = attributes(method, url)
    if allows(RULES, a):
        return None
    if a.namespace and namespaced is not None and allows(namespaced(a.namespace), a):
        return None
    what = a.resource + (f"/{a.subresource}" if a.subresource else "") if a.resource else a.path
    return f'{a.verb} {what} in API group "{a.group}"'
