"""EKS extension: time-scaled cluster lifecycle bound to the Kubernetes double, add-ons, access
entries and Pod Identity associations (moto 5.2 has none of the three)."""

from __future__ import annotations

import base64
import secrets
import string
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, ArmedFailure, ResourceMissing, now

CREATE_S = 600.0  # EKS control plane: 8-12 min in AWS
DELETE_S = 300.0
ADDON_S = 60.0
FAIL_AT = 0.5  # an armed cluster creation failure happens this far into CREATE_S
DEFAULT_VERSION = "1.32"

# addon name -> (latest version, type, publisher); versions as EKS publishes them for 1.32
ADDONS: dict[str, tuple[str, str, str]] = {
    "vpc-cni": ("v1.19.2-eksbuild.1", "networking", "eks"),
    "coredns": ("v1.11.4-eksbuild.2", "networking", "eks"),
    "kube-proxy": ("v1.32.0-eksbuild.2", "networking", "eks"),
    "eks-pod-identity-agent": ("v1.3.4-eksbuild.1", "security", "eks"),
    "aws-ebs-csi-driver": ("v1.41.0-eksbuild.1", "storage", "eks"),
    "aws-efs-csi-driver": ("v2.1.6-eksbuild.1", "storage", "eks"),
    "aws-fsx-csi-driver": ("v1.3.0-eksbuild.1", "storage", "eks"),
    "aws-mountpoint-s3-csi-driver": ("v1.13.0-eksbuild.1", "storage", "s3"),
    "metrics-server": ("v0.7.2-eksbuild.2", "observability", "eks"),
    "amazon-cloudwatch-observability": ("v3.6.0-eksbuild.1", "observability", "eks"),
    "cert-manager": ("v1.17.1-eksbuild.1", "security", "cert-manager"),
    "amazon-sagemaker-hyperpod-taskgovernance": ("v1.1.2-eksbuild.1", "machine-learning", "eks"),
    "amazon-sagemaker-hyperpod-observability": ("v1.0.0-eksbuild.1", "observability", "eks"),
    "amazon-sagemaker-hyperpod-training-operator": ("v1.2.0-eksbuild.1", "machine-learning", "eks"),
    "amazon-sagemaker-hyperpod-inference": ("v1.0.0-eksbuild.1", "machine-learning", "eks"),
}
ACCESS_POLICIES = (
    "AmazonEKSClusterAdminPolicy",
    "AmazonEKSAdminPolicy",
    "AmazonEKSEditPolicy",
    "AmazonEKSViewPolicy",
    "AmazonSagemakerHyperpodControllerPolicy",
    "AmazonSagemakerHyperpodClusterPolicy",
)


def _policy_arn(name: str) -> str:
    return f"arn:aws:eks::aws:cluster-access-policy/{name}"


def _fake_ca() -> str:
    body = base64.b64encode(secrets.token_bytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"
    return base64.b64encode(pem.encode()).decode()


def _errors() -> Any:
    from moto.eks import exceptions

    return exceptions


def _not_found(message: str, **names: Any) -> Exception:
    return _errors().ResourceNotFoundException(
        clusterName=names.get("clusterName"),
        nodegroupName=None,
        fargateProfileName=None,
        addonName=names.get("addonName"),
        message=message,
    )


def _in_use(message: str, **names: Any) -> Exception:
    return _errors().ResourceInUseException(
        clusterName=names.get("clusterName"),
        nodegroupName=None,
        addonName=names.get("addonName"),
        message=message,
    )


def _invalid_request(message: str, cluster: str) -> Exception:
    return _errors().InvalidRequestException(
        clusterName=cluster, nodegroupName=None, addonName=None, message=message
    )


def _invalid_parameter(message: str, cluster: str | None = None) -> Exception:
    return _errors().InvalidParameterException(
        clusterName=cluster, nodegroupName=None, fargateProfileName=None, addonName=None, message=message
    )


def _page(items: list[Any], max_results: Any, next_token: Any) -> tuple[list[Any], str | None]:
    start = int(next_token or 0)
    size = int(max_results or 100)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


# --- cluster lifecycle -------------------------------------------------------------------------


def _extras(cluster: Any) -> dict[str, dict[str, Any]]:
    if not hasattr(cluster, "podstart_extras"):
        cluster.podstart_extras = {"addons": {}, "access_entries": {}, "pod_identity": {}}
    return cluster.podstart_extras  # type: ignore[no-any-return]


def patch_cluster_lifecycle() -> None:
    """create_cluster -> CREATING, ACTIVE after CREATE_S with the kube double's URL; delete -> DELETING."""
    from moto.eks import models

    models.DEFAULT_KUBERNETES_VERSION = DEFAULT_VERSION
    models.DEFAULT_PLATFORM_VERSION = "eks.9"
    backend_cls = models.EKSBackend
    original_create = backend_cls.create_cluster

    def create_cluster(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        with RUNTIME.lock:
            cluster = original_create(self, name, *args, **kwargs)
            cluster.status = "CREATING"
            cluster.endpoint = None  # type: ignore[assignment]
            cluster.certificate_authority = {}
            _extras(cluster)

        def activate() -> None:
            if self.clusters.get(name) is not cluster or cluster.status != "CREATING":
                return
            if RUNTIME.kube is not None:
                cluster.endpoint = RUNTIME.kube.add_cluster(name, version=str(cluster.version or DEFAULT_VERSION))
            else:
                cluster.endpoint = (
                    f"https://{secrets.token_hex(16).upper()}.gr7.{self.region_name}.eks.amazonaws.com"
                )
            cluster.certificate_authority = {"data": _fake_ca()}
            cluster.status = "ACTIVE"

        armed = RUNTIME.take_armed("eks", "cluster", self.region_name, "next_create", cluster=name)
        if armed is not None:
            RUNTIME.after(CREATE_S * FAIL_AT, _fail_cluster_later(self, cluster, armed))
        RUNTIME.after(CREATE_S, activate)
        return cluster

    def delete_cluster(self: Any, name: str) -> Any:
        with RUNTIME.lock:
            cluster = self.describe_cluster(name)  # raises ResourceNotFoundException
            models.validate_safe_to_delete(cluster)
            if cluster.status == "DELETING":
                return cluster
            cluster.status = "DELETING"

        def gone() -> None:
            if self.clusters.get(name) is cluster:
                del self.clusters[name]
                self.cluster_count -= 1
                if RUNTIME.kube is not None:
                    RUNTIME.kube.remove_cluster(name)

        RUNTIME.after(DELETE_S, gone)
        return cluster

    backend_cls.create_cluster = create_cluster  # type: ignore[method-assign]
    backend_cls.delete_cluster = delete_cluster  # type: ignore[method-assign]


# --- terminal failures (the sandbox's states control) -------------------------------------------


def _issue(code: str | None, message: str, resource: str, default: str) -> dict[str, Any]:
    return {"code": code or default, "message": message, "resourceIds": [resource]}


def _fail_cluster_later(backend: Any, cluster: Any, armed: ArmedFailure) -> Callable[[], None]:
    def run() -> None:
        if backend.clusters.get(cluster.name) is cluster and cluster.status == "CREATING":
            cluster.status = armed.status
            cluster.health = {"issues": [_issue(armed.code, armed.reason, cluster.name, "Other")]}

    return run


def _settle_failed(addon: dict[str, Any], from_status: str, armed: ArmedFailure) -> Callable[[], None]:
    def run() -> None:
        if addon["status"] == from_status:
            addon["status"] = armed.status
            addon["health"] = {"issues": [_issue(armed.code, armed.reason, addon["addonName"], "InternalFailure")]}
            addon["modifiedAt"] = now()

    return run


def _backend(region: str) -> Any:
    from moto.eks.models import eks_backends

    return eks_backends[ACCOUNT_ID][region]


def fail_cluster(region: str, name: str, status: str, reason: str, code: str | None = None) -> None:
    """Put an EKS cluster into a failed status with a health issue carrying the reason."""
    with RUNTIME.lock:
        cluster = _backend(region).clusters.get(name)
        if cluster is None:
            raise ResourceMissing(f"EKS cluster {name} does not exist in {region}")
        cluster.status = status
        cluster.health = {"issues": [_issue(code, reason, name, "Other")]}


def fail_addon(region: str, cluster_name: str, addon_name: str, status: str, reason: str,
               code: str | None = None) -> None:
    """Put an add-on into CREATE_FAILED, UPDATE_FAILED, DEGRADED or DELETE_FAILED with a health issue."""
    with RUNTIME.lock:
        cluster = _backend(region).clusters.get(cluster_name)
        if cluster is None:
            raise ResourceMissing(f"EKS cluster {cluster_name} does not exist in {region}")
        addon = _extras(cluster)["addons"].get(addon_name)
        if addon is None:
            raise ResourceMissing(f"add-on {addon_name} does not exist in EKS cluster {cluster_name}")
        addon["status"] = status
        addon["health"] = {"issues": [_issue(code, reason, addon_name, "InternalFailure")]}
        addon["modifiedAt"] = now()


# --- responses for the missing operations ------------------------------------------------------


def _active_cluster(resp: Any) -> Any:
    name = resp._get_param("name")
    cluster = resp.eks_backend.describe_cluster(name)
    if cluster.status != "ACTIVE":
        raise _invalid_request(f"Cluster '{name}' is not in ACTIVE status", name)
    return cluster


def _cluster(resp: Any) -> Any:
    return resp.eks_backend.describe_cluster(resp._get_param("name"))


def _addon(resp: Any) -> tuple[Any, dict[str, Any]]:
    cluster = _cluster(resp)
    addon_name = unquote(resp._get_param("addonName"))
    addon = _extras(cluster)["addons"].get(addon_name)
    if addon is None:
        raise _not_found(
            f"No addon: {addon_name} found in cluster: {cluster.name}",
            clusterName=cluster.name,
            addonName=addon_name,
        )
    return cluster, addon


def create_addon(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster = _active_cluster(self)
        name = self._get_param("addonName")
        addons = _extras(cluster)["addons"]
        if name not in ADDONS:
            raise _invalid_parameter(
                f"Addon {name} specified is not supported in {cluster.version} kubernetes version",
                cluster.name,
            )
        if name in addons:
            raise _in_use(f"Addon already exists: {name}", clusterName=cluster.name, addonName=name)
        version, _, publisher = ADDONS[name]
        addon: dict[str, Any] = {
            "addonName": name,
            "clusterName": cluster.name,
            "status": "CREATING",
            "addonVersion": self._get_param("addonVersion") or version,
            "health": {"issues": []},
            "addonArn": f"arn:aws:eks:{cluster.arn.split(':')[3]}:{cluster.arn.split(':')[4]}:addon/"
            f"{cluster.name}/{name}/{secrets.token_hex(18)}",
            "createdAt": now(),
            "modifiedAt": now(),
            "tags": self._get_param("tags") or {},
            "publisher": publisher,
            "owner": "aws",
        }
        for key in ("serviceAccountRoleArn", "configurationValues"):
            if self._get_param(key):
                addon[key] = self._get_param(key)
        if self._get_param("podIdentityAssociations"):
            addon["podIdentityAssociations"] = [
                f"{cluster.arn.replace(':cluster/', ':podidentityassociation/')}/a-{_short_id()}"
                for _ in self._get_param("podIdentityAssociations")
            ]
        addons[name] = addon
        region = cluster.arn.split(":")[3]
        armed = RUNTIME.take_armed("eks", "addon", region, "next_create", cluster=cluster.name, addon=name)
    settle = _settle_failed(addon, "CREATING", armed) if armed else _settle(addon, "CREATING", "ACTIVE",
                                                                             then=_installed(addon))
    RUNTIME.after(ADDON_S, settle)
    return ActionResult({"addon": addon})


def _kube_store(cluster_name: str) -> Any:
    find = getattr(RUNTIME.kube, "store_or_none", None)
    return find(cluster_name) if find else None


def _installed(addon: dict[str, Any]) -> Callable[[], None]:
    """What the add-on puts into the cluster (namespaces, controllers, CRDs) appears as it turns ACTIVE."""
    def run() -> None:
        from sandbox.kube.addons import install

        store = _kube_store(addon["clusterName"])
        if store is not None:
            install(store, addon["addonName"], addon["addonVersion"])

    return run


def _settle(addon: dict[str, Any], from_status: str, to_status: str,
            then: Callable[[], None] | None = None) -> Callable[[], None]:
    def run() -> None:
        if addon["status"] == from_status:
            if then is not None:
                then()
            addon["status"] = to_status
            addon["modifiedAt"] = now()

    return run


def describe_addon(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, addon = _addon(self)
        return ActionResult({"addon": dict(addon)})


def list_addons(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        names = sorted(_extras(_cluster(self))["addons"])
    page, token = _page(names, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult({"addons": page, "nextToken": token})


def delete_addon(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, addon = _addon(self)
        addon["status"] = "DELETING"
        addon["modifiedAt"] = now()
        addons = _extras(cluster)["addons"]

    def gone() -> None:
        if addons.get(addon["addonName"]) is addon:
            del addons[addon["addonName"]]
            from sandbox.kube.addons import uninstall

            store = _kube_store(addon["clusterName"])
            if store is not None:
                uninstall(store, addon["addonName"])

    RUNTIME.after(ADDON_S, gone)
    return ActionResult({"addon": dict(addon)})


def update_addon(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, addon = _addon(self)
        if addon["status"] not in ("ACTIVE", "DEGRADED", "UPDATE_FAILED"):
            raise _in_use(
                f"Addon {addon['addonName']} is in {addon['status']} status",
                clusterName=addon["clusterName"],
                addonName=addon["addonName"],
            )
        params = []
        for key, kind in (
            ("addonVersion", "AddonVersion"),
            ("serviceAccountRoleArn", "ServiceAccountRoleArn"),
            ("configurationValues", "ConfigurationValues"),
        ):
            value = self._get_param(key)
            if value is not None:
                addon[key] = value
                params.append({"type": kind, "value": value})
        addon["status"] = "UPDATING"
        addon["health"] = {"issues": []}
        addon["modifiedAt"] = now()
        region = addon["addonArn"].split(":")[3]
        armed = RUNTIME.take_armed("eks", "addon", region, "next_update", cluster=addon["clusterName"],
                                   addon=addon["addonName"])
    settle = _settle_failed(addon, "UPDATING", armed) if armed else _settle(addon, "UPDATING", "ACTIVE")
    RUNTIME.after(ADDON_S, settle)
    update = {
        "id": secrets.token_hex(16),
        "status": "InProgress",
        "type": "AddonUpdate",
        "params": params,
        "createdAt": now(),
        "errors": [],
    }
    return ActionResult({"update": update})


def describe_addon_versions(self: Any) -> Any:
    from moto.core.responses import ActionResult

    wanted = self._get_param("addonName")
    k8s = self._get_param("kubernetesVersion") or DEFAULT_VERSION
    infos = [
        {
            "addonName": name,
            "type": kind,
            "addonVersions": [
                {
                    "addonVersion": version,
                    "architecture": ["amd64", "arm64"],
                    "computeTypes": ["ec2"],
                    "compatibilities": [
                        {"clusterVersion": k8s, "platformVersions": ["*"], "defaultVersion": True}
                    ],
                    "requiresConfiguration": False,
                    "requiresIamPermissions": name
                    in (
                        "vpc-cni",
                        "aws-ebs-csi-driver",
                        "aws-efs-csi-driver",
                        "aws-fsx-csi-driver",
                        "aws-mountpoint-s3-csi-driver",
                    ),
                }
            ],
            "publisher": publisher,
            "owner": "aws",
        }
        for name, (version, kind, publisher) in sorted(ADDONS.items())
        if not wanted or name == wanted
    ]
    page, token = _page(infos, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult({"addons": page, "nextToken": token})


def _principal(resp: Any) -> str:
    return unquote(resp._get_param("principalArn"))


def _access_entry(resp: Any) -> tuple[Any, dict[str, Any]]:
    cluster = _cluster(resp)
    principal = _principal(resp)
    entry = _extras(cluster)["access_entries"].get(principal)
    if entry is None:
        raise _not_found(
            f"The specified principalArn could not be found. You can view your available "
            f"access entries with 'list-access-entries'. ({principal})",
            clusterName=cluster.name,
        )
    return cluster, entry


def create_access_entry(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster = _active_cluster(self)
        principal = self._get_param("principalArn")
        entries = _extras(cluster)["access_entries"]
        if principal in entries:
            raise _in_use(
                "The specified access entry resource is already in use on this cluster.",
                clusterName=cluster.name,
            )
        region, account = cluster.arn.split(":")[3:5]
        kind = self._get_param("type") or "STANDARD"
        entry = {
            "clusterName": cluster.name,
            "principalArn": principal,
            "kubernetesGroups": self._get_param("kubernetesGroups") or [],
            "accessEntryArn": f"arn:aws:eks:{region}:{account}:access-entry/{cluster.name}/role/{account}/"
            f"{principal.rsplit('/', 1)[-1]}/{secrets.token_hex(18)}",
            "createdAt": now(),
            "modifiedAt": now(),
            "tags": self._get_param("tags") or {},
            "username": self._get_param("username") or principal,
            "type": kind,
            "podstart_policies": {},
        }
        entries[principal] = entry
        return ActionResult({"accessEntry": _public(entry)})


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if not k.startswith("podstart_")}


def describe_access_entry(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, entry = _access_entry(self)
        return ActionResult({"accessEntry": _public(entry)})


def update_access_entry(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, entry = _access_entry(self)
        for key in ("kubernetesGroups", "username"):
            if self._get_param(key) is not None:
                entry[key] = self._get_param(key)
        entry["modifiedAt"] = now()
        return ActionResult({"accessEntry": _public(entry)})


def list_access_entries(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        principals = sorted(_extras(_cluster(self))["access_entries"])
    page, token = _page(principals, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult({"accessEntries": page, "nextToken": token})


def delete_access_entry(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, entry = _access_entry(self)
        del _extras(cluster)["access_entries"][entry["principalArn"]]
    return ActionResult({})


def associate_access_policy(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, entry = _access_entry(self)
        policy_arn = self._get_param("policyArn")
        if policy_arn not in {_policy_arn(p) for p in ACCESS_POLICIES}:
            raise _invalid_parameter(f"The specified policyArn is invalid: {policy_arn}", cluster.name)
        scope = self._get_param("accessScope") or {"type": "cluster"}
        scope.setdefault("namespaces", [])
        previous = entry["podstart_policies"].get(policy_arn)
        policy = {
            "policyArn": policy_arn,
            "accessScope": scope,
            "associatedAt": previous["associatedAt"] if previous else now(),
            "modifiedAt": now(),
        }
        entry["podstart_policies"][policy_arn] = policy
        return ActionResult(
            {
                "clusterName": cluster.name,
                "principalArn": entry["principalArn"],
                "associatedAccessPolicy": policy,
            }
        )


def list_associated_access_policies(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, entry = _access_entry(self)
        policies = list(entry["podstart_policies"].values())
    page, token = _page(policies, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult(
        {
            "clusterName": cluster.name,
            "principalArn": entry["principalArn"],
            "associatedAccessPolicies": page,
            "nextToken": token,
        }
    )


def disassociate_access_policy(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, entry = _access_entry(self)
        policy_arn = unquote(self._get_param("policyArn"))
        if entry["podstart_policies"].pop(policy_arn, None) is None:
            raise _not_found(
                f"The specified policy {policy_arn} is not associated with the access entry",
                clusterName=cluster.name,
            )
    return ActionResult({})


def list_access_policies(self: Any) -> Any:
    from moto.core.responses import ActionResult

    policies = [{"name": p, "arn": _policy_arn(p)} for p in ACCESS_POLICIES]
    page, token = _page(policies, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult({"accessPolicies": page, "nextToken": token})


def _association_prefix(cluster: Any) -> str:
    return str(cluster.arn).replace(":cluster/", ":podidentityassociation/")


def _short_id() -> str:
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(17))


def _association(resp: Any) -> tuple[Any, dict[str, Any]]:
    cluster = _cluster(resp)
    association_id = resp._get_param("associationId")
    association = _extras(cluster)["pod_identity"].get(association_id)
    if association is None:
        raise _not_found(
            f"No Pod Identity Association found with id: {association_id}", clusterName=cluster.name
        )
    return cluster, association


_SUMMARY_KEYS = ("clusterName", "namespace", "serviceAccount", "associationArn", "associationId", "ownerArn")


def create_pod_identity_association(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster = _active_cluster(self)
        namespace, account = self._get_param("namespace"), self._get_param("serviceAccount")
        store = _extras(cluster)["pod_identity"]
        if any(a["namespace"] == namespace and a["serviceAccount"] == account for a in store.values()):
            raise _in_use(
                "Association already exists for the given namespace and service account",
                clusterName=cluster.name,
            )
        association_id = f"a-{_short_id()}"
        association = {
            "clusterName": cluster.name,
            "namespace": namespace,
            "serviceAccount": account,
            "roleArn": self._get_param("roleArn"),
            "associationArn": f"{_association_prefix(cluster)}/{association_id}",
            "associationId": association_id,
            "tags": self._get_param("tags") or {},
            "createdAt": now(),
            "modifiedAt": now(),
            "disableSessionTags": bool(self._get_param("disableSessionTags")),
        }
        if self._get_param("targetRoleArn"):
            association["targetRoleArn"] = self._get_param("targetRoleArn")
        store[association_id] = association
        return ActionResult({"association": association})


def describe_pod_identity_association(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, association = _association(self)
        return ActionResult({"association": dict(association)})


def update_pod_identity_association(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        _, association = _association(self)
        for key in ("roleArn", "targetRoleArn", "disableSessionTags"):
            if self._get_param(key) is not None:
                association[key] = self._get_param(key)
        association["modifiedAt"] = now()
        return ActionResult({"association": dict(association)})


def delete_pod_identity_association(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        cluster, association = _association(self)
        del _extras(cluster)["pod_identity"][association["associationId"]]
        return ActionResult({"association": association})


def list_pod_identity_associations(self: Any) -> Any:
    from moto.core.responses import ActionResult

    namespace, account = self._get_param("namespace"), self._get_param("serviceAccount")
    with RUNTIME.lock:
        associations = [
            {k: a[k] for k in _SUMMARY_KEYS if k in a}
            for a in _extras(_cluster(self))["pod_identity"].values()
            if (not namespace or a["namespace"] == namespace)
            and (not account or a["serviceAccount"] == account)
        ]
    page, token = _page(associations, self._get_param("maxResults"), self._get_param("nextToken"))
    return ActionResult({"associations": page, "nextToken": token})


_OPERATIONS: tuple[Callable[[Any], Any], ...] = (
    create_addon,
    describe_addon,
    list_addons,
    delete_addon,
    update_addon,
    describe_addon_versions,
    create_access_entry,
    describe_access_entry,
    update_access_entry,
    list_access_entries,
    delete_access_entry,
    associate_access_policy,
    list_associated_access_policies,
    disassociate_access_policy,
    list_access_policies,
    create_pod_identity_association,
    describe_pod_identity_association,
    update_pod_identity_association,
    delete_pod_identity_association,
    list_pod_identity_associations,
)
_PATHS = (
    "{0}/clusters/(?P<name>[^/]+)/addons$",
    "{0}/clusters/(?P<name>[^/]+)/addons/(?P<addonName>[^/]+)$",
    "{0}/clusters/(?P<name>[^/]+)/addons/(?P<addonName>[^/]+)/update$",
    "{0}/addons/supported-versions$",
    "{0}/access-policies$",
    "{0}/clusters/(?P<name>[^/]+)/access-entries$",
    "{0}/clusters/(?P<name>[^/]+)/access-entries/(?P<principalArn>.+)$",
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations$",
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations/(?P<associationId>[^/]+)$",
)


def patch_operations() -> None:
    """Add the missing operations to EKSResponse and their paths to moto's eks url map."""
    from moto.eks import urls
    from moto.eks.responses import EKSResponse

    for op in _OPERATIONS:
        setattr(EKSResponse, op.__name__, op)
    for path in _PATHS:
        urls.url_paths.setdefault(path, urls.response.dispatch)


def patch() -> None:
    if getattr(patch, "done", False):
        return
    patch_cluster_lifecycle()
    patch_operations()
    patch.done = True  # type: ignore[attr-defined]
