"""Terminal failure states on demand, for tests: the sandbox's `POST /v1/sandbox/states`.

Drive a HyperPod cluster (`Failed` + FailureMessage), an EKS cluster (`FAILED` + health issue), an
EKS add-on (`CREATE_FAILED` / `UPDATE_FAILED` / `DEGRADED` / `DELETE_FAILED` + health issue) or an
FSx file system (`FAILED` + FailureDetails.Message) into the failed state AWS would report: at once
(`"when": "now"`), or arm the next create (`"next_create"`) or add-on update (`"next_update"`) of a
matching resource to fail part-way through, as a failing AWS operation does.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass
from typing import Any

from sandbox.aws.runtime import RUNTIME, ArmedFailure

FAILED_STATUSES: dict[tuple[str, str], tuple[str, ...]] = {
    ("sagemaker", "cluster"): ("Failed",),
    ("eks", "cluster"): ("FAILED",),
    ("eks", "addon"): ("CREATE_FAILED", "UPDATE_FAILED", "DEGRADED", "DELETE_FAILED"),
    ("fsx", "file_system"): ("FAILED",),
}
WHEN = ("now", "next_create", "next_update")
FIELDS = ("service", "region", "cluster", "addon", "file_system_id", "status", "reason", "code", "when")
DEFAULT_REGION = "us-west-2"
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
_FS_ID = re.compile(r"^fs-[0-9a-f]{8,21}$")


class InvalidStateRequest(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class StateChange:
    service: str
    resource: str
    region: str
    status: str
    reason: str
    when: str = "now"
    cluster: str | None = None
    addon: str | None = None
    file_system_id: str | None = None
    code: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _issue_codes(shape: str) -> tuple[str, ...]:
    import botocore.session

    return tuple(botocore.session.get_session().get_service_model("eks").shape_for(shape).enum)


def _text(body: dict[str, Any], field: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str | None:
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidStateRequest(field, "must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise InvalidStateRequest(field, f"{value!r} is not {what}")
    return value


def parse(body: Any) -> StateChange:
    """The request body -> a StateChange; InvalidStateRequest names the first bad field."""
    if not isinstance(body, dict):
        raise InvalidStateRequest("body", "must be a JSON object")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise InvalidStateRequest(unknown[0], f"unknown field; the fields are {', '.join(FIELDS)}")
    service = body.get("service")
    if service not in ("sagemaker", "eks", "fsx"):
        raise InvalidStateRequest("service", "must be one of sagemaker, eks, fsx")
    region = _text(body, "region", _REGION, "a region name like us-west-2") or DEFAULT_REGION
    when = body.get("when", "now")
    if when not in WHEN:
        raise InvalidStateRequest("when", f"must be one of {', '.join(WHEN)}")
    cluster = _text(body, "cluster", _NAME, "a cluster name")
    addon = _text(body, "addon", _NAME, "an add-on name")
    fs_id = _text(body, "file_system_id", _FS_ID, "an FSx file system id (fs-...)")
    reason = _text(body, "reason")
    code = _text(body, "code")
    if reason is not None and len(reason) > 1024:
        raise InvalidStateRequest("reason", "must be at most 1024 characters")

    def forbid(*fields: str) -> None:
        for name in fields:
            if body.get(name) is not None:
                raise InvalidStateRequest(name, f"does not apply to {service}")

    if service == "sagemaker":
        forbid("addon", "file_system_id", "code")
        resource = "cluster"
    elif service == "eks":
        forbid("file_system_id")
        resource = "addon" if addon else "cluster"
        if code is not None:
            codes = _issue_codes("AddonIssueCode" if addon else "ClusterIssueCode")
            if code not in codes:
                raise InvalidStateRequest("code", f"must be one of {', '.join(codes)}")
    else:
        forbid("cluster", "addon", "code")
        resource = "file_system"
        if when == "now" and fs_id is None:
            raise InvalidStateRequest("file_system_id", "is required to change a file system now")
        if when != "now" and fs_id is not None:
            raise InvalidStateRequest("file_system_id", "must be absent: the next file system created fails")
    if service in ("sagemaker", "eks") and cluster is None:
        raise InvalidStateRequest("cluster", f"is required for {service}")
    if when == "next_update" and resource != "addon":
        raise InvalidStateRequest("when", "next_update applies to EKS add-ons only")
    allowed = FAILED_STATUSES[(service, resource)]
    status = body.get("status")
    if status not in allowed:
        raise InvalidStateRequest("status", f"for {service} {resource.replace('_', ' ')}s must be one of "
                                            f"{', '.join(allowed)}")
    return StateChange(service=service, resource=resource, region=region, status=status,
                       reason=reason or f"Simulated failure: {status}", when=when, cluster=cluster, addon=addon,
                       file_system_id=fs_id, code=code)


def apply(change: StateChange) -> None:
    """Change the resource now (ResourceMissing when it does not exist), or arm its next create/update."""
    if change.when != "now":
        RUNTIME.arm(ArmedFailure(service=change.service, resource=change.resource, region=change.region,
                                 when=change.when, status=change.status, reason=change.reason,
                                 cluster=change.cluster, addon=change.addon, code=change.code))
        return
    from sandbox.aws import eks, fsx
    from sandbox.aws.sagemaker import fail_cluster

    if change.service == "sagemaker":
        fail_cluster(change.region, change.cluster or "", change.reason)
    elif change.resource == "addon":
        eks.fail_addon(change.region, change.cluster or "", change.addon or "", change.status, change.reason,
                       change.code)
    elif change.service == "eks":
        eks.fail_cluster(change.region, change.cluster or "", change.status, change.reason, change.code)
    else:
        fsx.fail_file_system(change.region, change.file_system_id or "", change.reason)


def describe(change: StateChange, client: Any) -> dict[str, Any]:
    """The resource as boto3 sees it now (client: a boto3 client of the change's service and region)."""
    if change.service == "sagemaker":
        out = client.describe_cluster(ClusterName=change.cluster)
    elif change.resource == "addon":
        out = client.describe_addon(clusterName=change.cluster, addonName=change.addon)
    elif change.service == "eks":
        out = client.describe_cluster(name=change.cluster)
    else:
        out = client.describe_file_systems(FileSystemIds=[change.file_system_id])
    out.pop("ResponseMetadata", None)
    return jsonable(out)  # type: ignore[no-any-return]


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value
