"""Who a request to the embedded Kubernetes API is, and what the cluster's RBAC lets them do.

Every cluster starts with the RBAC objects a new EKS cluster has (`DEFAULT_RBAC`: `cluster-admin` bound to
`system:masters`, the `admin`/`edit`/`view` user-facing roles, discovery and self-review for every
authenticated user). Requests are served as the cluster's creator, `kubernetes-admin` in `system:masters`
(what `aws eks update-kubeconfig` gives the IAM principal that created the cluster; kubectl sends no
credentials over the sandbox's plain HTTP anyway). A request that impersonates (`kubectl --as=NAME
[--as-group=G]`: `Impersonate-User`/`Impersonate-Group` headers) is authorized as that user by the cluster's
Roles, ClusterRoles and bindings, as the API server's RBAC authorizer does, and refused with 403 otherwise.
`kubectl auth can-i` (SelfSubjectAccessReview), `kubectl auth can-i --list` (SelfSubjectRulesReview) and
`kubectl auth whoami` (SelfSubjectReview) answer from the same evaluation.

This module is kubectl's view only. The sandbox's check of what PodStart's API function may do (its access
entry's `podstart-api` group, `functions/domain/rbac.py`) runs in the function's Kubernetes client hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.kube.errors import ApiError

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
ADMIN_USER = "kubernetes-admin"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_WORKLOADS = [
    {"apiGroups": [""], "resources": ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy",
                                      "configmaps", "endpoints", "persistentvolumeclaims", "replicationcontrollers",
                                      "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                                      "services/proxy"]},
    {"apiGroups": ["apps"], "resources": ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                                          "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"]},
    {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"]},
]
_VIEWABLE = [
    {"apiGroups": [""], "resources": ["configmaps", "endpoints", "persistentvolumeclaims", "pods", "pods/log",
                                      "pods/status", "replicationcontrollers", "serviceaccounts", "services",
                                      "services/status", "events", "limitranges", "namespaces", "namespaces/status",
                                      "resourcequotas", "resourcequotas/status"]},
    {"apiGroups": ["apps"], "resources": ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                                          "deployments/scale", "deployments/status", "replicasets",
                                          "replicasets/scale", "replicasets/status", "statefulsets",
                                          "statefulsets/scale", "statefulsets/status"]},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]},
    {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingresses/status", "networkpolicies"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets", "poddisruptionbudgets/status"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"]},
    {"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"]},
]


def _role(name: str, rules: list[Obj], kind: str = "ClusterRole") -> Obj:
    return {"apiVersion": RBAC, "kind": kind,
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": rules}


def _binding(name: str, role: str, group: str) -> Obj:
    return {"apiVersion": RBAC, "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]}


DEFAULT_RBAC: tuple[Obj, ...] = (
    _role("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                            {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
    _binding("cluster-admin", "cluster-admin", MASTERS),
    _role("admin", [*({**r, "verbs": [*_READ, *_WRITE]} for r in _WORKLOADS),
                    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"],
                     "verbs": [*_READ, *_WRITE]},
                    *({**r, "verbs": _READ} for r in _VIEWABLE)]),
    _role("edit", [*({**r, "verbs": [*_READ, *_WRITE]} for r in _WORKLOADS),
                   *({**r, "verbs": _READ} for r in _VIEWABLE)]),
    _role("view", [{**r, "verbs": _READ} for r in _VIEWABLE]),
    _role("system:discovery", [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                                    "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                                "verbs": ["get"]}]),
    _binding("system:discovery", "system:discovery", AUTHENTICATED),
    _role("system:basic-user", [{"apiGroups": ["authorization.k8s.io"],
                                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                                 "verbs": ["create"]},
                                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                                 "verbs": ["create"]}]),
    _binding("system:basic-user", "system:basic-user", AUTHENTICATED),
)


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...]
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def info(self) -> Obj:
        out: Obj = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ADMIN = User(ADMIN_USER, (MASTERS, AUTHENTICATED))


def user_of(headers: Any) -> tuple[User, bool]:
    """The request's user, and whether it impersonates one (then RBAC decides what it may do)."""
    name = headers.get("Impersonate-User")
    groups = list(headers.get_all("Impersonate-Group") or []) if hasattr(headers, "get_all") else []
    if not name:
        if groups:
            raise ApiError(500, "InternalError", "requested impersonation of groups without impersonating a user")
        return ADMIN, False
    extra: dict[str, tuple[str, ...]] = {}
    for key in headers.keys() if hasattr(headers, "keys") else []:
        if key.lower().startswith("impersonate-extra-"):
            extra[key[len("impersonate-extra-"):].lower()] = tuple(headers.get_all(key) or [])
    if name.startswith("system:serviceaccount:") and name.count(":") == 3:
        namespace = name.split(":")[2]
        groups += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    if AUTHENTICATED not in groups and name != "system:anonymous":
        groups.append(AUTHENTICATED)
    return User(name, tuple(dict.fromkeys(groups)), headers.get("Impersonate-Uid") or "", extra), True


@dataclass(frozen=True)
class Attributes:
    """A request as the authorizer sees it."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""  # a non-resource request (discovery, /version, /openapi)

    @property
    def is_resource(self) -> bool:
        return not self.path


def _matches(values: list[str] | None, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)  # type: ignore[operator]


def _resource_matches(rule_resources: list[str], resource: str, subresource: str) -> bool:
    wanted = f"{resource}/{subresource}" if subresource else resource
    for r in rule_resources:
        if r in ("*", wanted):
            return True
        if subresource and r == f"*/{subresource}":
            return True
        if r == f"{resource}/*" and subresource:
            return True
    return False


def rule_allows(rule: Obj, a: Attributes) -> bool:
    if not _matches(rule.get("verbs"), a.verb):
        return False
    if not a.is_resource:
        return any(u == a.path or u == "*" or (u.endswith("*") and a.path.startswith(u[:-1]))
                   for u in rule.get("nonResourceURLs") or [])
    if not _matches(rule.get("apiGroups"), a.group):
        return False
    if not _resource_matches(rule.get("resources") or [], a.resource, a.subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or a.name in names


def _subject_matches(subject: Obj, user: User) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return bool(subject.get("name") == user.name)
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        return user.name == f"system:serviceaccount:{subject.get('namespace', '')}:{subject.get('name', '')}"
    return False


def _role_rules(store: Any, ref: Obj, namespace: str) -> list[Obj]:
    kind, name = ref.get("kind"), ref.get("name", "")
    if kind == "ClusterRole":
        role = store.get(RBAC, "ClusterRole", name)
        if role is None:
            return []
        rules = list(role.get("rules") or [])
        for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
            wanted = selector.get("matchLabels") or {}
            for other in store.list(RBAC, "ClusterRole"):
                labels = other["metadata"].get("labels") or {}
                if wanted and all(labels.get(k) == v for k, v in wanted.items()) and other is not role:
                    rules += other.get("rules") or []
        return rules
    if kind == "Role" and namespace:
        role = store.get(RBAC, "Role", name, namespace)
        return list((role or {}).get("rules") or [])
    return []


def _grants(store: Any, user: User, namespace: str) -> list[tuple[str, Obj, list[Obj]]]:
    """(what grants it, the binding, its rules) for every binding naming the user: cluster-wide ones, then
    those of the namespace."""
    out = []
    for b in store.list(RBAC, "ClusterRoleBinding"):
        if any(_subject_matches(s, user) for s in b.get("subjects") or []):
            out.append(("ClusterRoleBinding", b, _role_rules(store, b.get("roleRef") or {}, "")))
    if namespace:
        for b in store.list(RBAC, "RoleBinding", namespace):
            if any(_subject_matches(s, user) for s in b.get("subjects") or []):
                out.append(("RoleBinding", b, _role_rules(store, b.get("roleRef") or {}, namespace)))
    return out


def authorize(store: Any, user: User, a: Attributes) -> tuple[bool, str]:
    """(allowed, reason) as the RBAC authorizer answers; the reason names the binding that allows."""
    for binding_kind, binding, rules in _grants(store, user, a.namespace if a.is_resource else ""):
        if any(rule_allows(rule, a) for rule in rules):
            ref = binding.get("roleRef") or {}
            subject = next(s for s in binding.get("subjects") or [] if _subject_matches(s, user))
            where = f'"{binding["metadata"]["name"]}"'
            if binding_kind == "RoleBinding":
                where += f' of {ref.get("kind")} "{ref.get("name")}" to {subject.get("kind")} "{subject.get("name")}"'
                return True, f'RBAC: allowed by RoleBinding {where} in namespace "{a.namespace}"'
            return True, (f'RBAC: allowed by ClusterRoleBinding {where} of ClusterRole "{ref.get("name")}" to '
                          f'{subject.get("kind")} "{subject.get("name")}"')
    return False, ""


def forbidden(user: User, a: Attributes) -> ApiError:
    """The API server's 403 for a request RBAC does not allow."""
    if not a.is_resource:
        return ApiError(403, "Forbidden", f'forbidden: User "{user.name}" cannot {a.verb} path "{a.path}"')
    what = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    named = f' "{a.name}"' if a.name else ""
    scope = f' in the namespace "{a.namespace}"' if a.namespace else " at the cluster scope"
    return ApiError(403, "Forbidden",
                    f'{what}{named} is forbidden: User "{user.name}" cannot {a.verb} resource "{what}" in API group '
                    f'"{a.group}"{scope}',
                    {"name": a.name, "group": a.group, "kind": a.resource})


def rules_review(store: Any, user: User, namespace: str) -> Obj:
    """A SelfSubjectRulesReview's status: the rules that apply to the user in the namespace."""
    resource_rules: list[Obj] = []
    non_resource: list[Obj] = []
    for _, _, rules in _grants(store, user, namespace):
        for rule in rules:
            if rule.get("nonResourceURLs"):
                non_resource.append({"verbs": list(rule.get("verbs") or []),
                                     "nonResourceURLs": list(rule["nonResourceURLs"])})
            else:
                entry: Obj = {"verbs": list(rule.get("verbs") or []), "apiGroups": list(rule.get("apiGroups") or []),
                              "resources": list(rule.get("resources") or [])}
                if rule.get("resourceNames"):
                    entry["resourceNames"] = list(rule["resourceNames"])
                resource_rules.append(entry)
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource, "incomplete": False}


def review(store: Any, user: User, kind: str, body: Obj) -> Obj:
    """The answer to a SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectRulesReview or
    SelfSubjectReview created by `user`: the body with its status filled in, as the API server returns it."""
    spec = body.get("spec") or {}
    out = {**body, "metadata": {**(body.get("metadata") or {}), "creationTimestamp": None}}
    if kind == "SelfSubjectReview":
        return {**out, "status": {"userInfo": user.info()}}
    if kind == "SelfSubjectRulesReview":
        return {**out, "status": rules_review(store, user, spec.get("namespace") or "")}
    subject = user
    if kind == "SubjectAccessReview":
        subject = User(spec.get("user") or "", tuple(spec.get("groups") or ()), spec.get("uid") or "")
        if not subject.name and not subject.groups:
            raise ApiError(422, "Invalid", "SubjectAccessReview is invalid: spec.user: Invalid value: \"\": at "
                                           "least one of user or group must be specified")
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):
        raise ApiError(422, "Invalid", f"{kind}.authorization.k8s.io is invalid: spec.resourceAttributes: Invalid "
                                       "value: exactly one of nonResourceAttributes or resourceAttributes must be "
                                       "specified")
    if resource is not None:
        attrs = Attributes(verb=resource.get("verb") or "", group=resource.get("group") or "",
                           resource=resource.get("resource") or "", subresource=resource.get("subresource") or "",
                           name=resource.get("name") or "", namespace=resource.get("namespace") or "")
    else:
        attrs = Attributes(verb=(non_resource or {}).get("verb") or "", path=(non_resource or {}).get("path") or "/")
    allowed, reason = authorize(store, subject, attrs)
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {**out, "status": status}


def token_request(store: Any, namespace: str, name: str, body: Obj) -> Obj:
    """`kubectl create token SA`: a TokenRequest answered with a signed-looking JWT for the service account
    (issuer as on EKS, audiences and expiry from the request, default one hour)."""
    import base64
    import hashlib
    import json
    import time

    sa = store.get("v1", "ServiceAccount", name, namespace)
    if sa is None:
        raise ApiError(404, "NotFound", f'serviceaccounts "{name}" not found',
                       {"name": name, "kind": "serviceaccounts"})
    spec = body.get("spec") or {}
    seconds = int(spec.get("expirationSeconds") or 3600)
    if seconds < 600:
        raise ApiError(422, "Invalid", f'TokenRequest.authentication.k8s.io "{name}" is invalid: '
                                       "spec.expirationSeconds: Invalid value: may not specify a duration less than "
                                       "10 minutes")
    now = int(time.time())
    audiences = list(spec.get("audiences") or ["https://kubernetes.default.svc"])
    claims = {"aud": audiences, "exp": now + seconds, "iat": now, "nbf": now,
              "iss": f"https://oidc.eks.us-west-2.amazonaws.com/id/{hashlib.md5(store.name.encode()).hexdigest()}",
              "jti": hashlib.sha1(f"{name}{now}".encode()).hexdigest(),
              "kubernetes.io": {"namespace": namespace,
                                "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]}},
              "sub": f"system:serviceaccount:{namespace}:{name}"}

    def part(data: Obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")

    unsigned = part({"alg": "RS256", "kid": hashlib.sha1(store.name.encode()).hexdigest()[:20]}) + "." + part(claims)
    signature = base64.urlsafe_b64encode(hashlib.sha256(unsigned.encode()).digest()).decode().rstrip("=")
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + seconds))
    return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
            "spec": {"audiences": audiences, "expirationSeconds": seconds,
                     "boundObjectRef": spec.get("boundObjectRef")},
            "status": {"token": f"{unsigned}.{signature}", "expirationTimestamp": expires}}
