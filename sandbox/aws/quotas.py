"""Service Quotas extension: SageMaker HyperPod cluster-usage quotas (moto knows only 'vpc')."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID

CLUSTER_USAGE: dict[str, int] = {
    "ml.p5.48xlarge": 4,
    "ml.p5en.48xlarge": 2,
    "ml.p4d.24xlarge": 4,
    "ml.g5.8xlarge": 16,
    "ml.g6e.48xlarge": 4,
    "ml.trn1.32xlarge": 4,
    "ml.m5.2xlarge": 8,
    "ml.c5.2xlarge": 8,
    "ml.t3.medium": 8,
    "ml.c5.large": 2000,  # scale rehearsals: a 2,000-instance CPU group fits the quota (GPU quotas stay realistic)
}
_CPU_FAMILIES = ("ml.m", "ml.c", "ml.r", "ml.t", "ml.i3")
OTHER_QUOTAS: tuple[tuple[str, float, str], ...] = (
    ("Maximum number of instances allowed per SageMaker HyperPod cluster", 2500, "None"),
    ("Total number of instances allowed across SageMaker HyperPod clusters", 100, "None"),
    ("Maximum number of SageMaker HyperPod clusters per Region", 10, "None"),
    ("Maximum size of EBS volume in GB for a SageMaker HyperPod cluster instance", 16384, "None"),
    ("Maximum number of training plans per Region", 10, "None"),
)


def _code(name: str) -> str:
    return "L-" + hashlib.sha1(name.encode()).hexdigest()[:8].upper()


@lru_cache(maxsize=1)
def cluster_instance_types() -> tuple[str, ...]:
    """Every HyperPod instance type botocore's SageMaker model allows (ClusterInstanceType enum)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    return tuple(model.shape_for("ClusterInstanceType").enum)


def _default_usage(instance_type: str) -> int:
    if instance_type in CLUSTER_USAGE:
        return CLUSTER_USAGE[instance_type]
    return 8 if instance_type.startswith(_CPU_FAMILIES) else 0


def sagemaker_quotas(region: str) -> list[dict[str, Any]]:
    def quota(name: str, value: float, unit: str) -> dict[str, Any]:
        code = _code(name)
        return {
            "ServiceCode": "sagemaker",
            "ServiceName": "Amazon SageMaker",
            "QuotaArn": f"arn:aws:servicequotas:{region}:{ACCOUNT_ID}:sagemaker/{code}",
            "QuotaCode": code,
            "QuotaName": name,
            "Value": float(value),
            "Unit": unit,
            "Adjustable": True,
            "GlobalQuota": False,
            "QuotaAppliedAtLevel": "ACCOUNT",
        }

    usage = [quota(f"{t} for cluster usage", _default_usage(t), "None") for t in cluster_instance_types()]
    return usage + [quota(*q) for q in OTHER_QUOTAS]


def patch() -> None:
    """Answer list_service_quotas / list_aws_default_service_quotas / get_(aws_default_)service_quota
    for ServiceCode 'sagemaker'; other codes keep moto's behaviour."""
    from moto.servicequotas.exceptions import NoSuchResource
    from moto.servicequotas.models import ServiceQuotasBackend
    from moto.servicequotas.responses import ServiceQuotasResponse

    if getattr(ServiceQuotasBackend, "_podstart", False):
        return
    original_list = ServiceQuotasBackend.list_aws_default_service_quotas
    original_get = ServiceQuotasBackend.get_service_quota

    def list_quotas(self: Any, service_code: str) -> list[dict[str, Any]]:
        if service_code == "sagemaker":
            return sagemaker_quotas(self.region_name)
        return original_list(self, service_code)

    def get_quota(self: Any, service_code: str, quota_code: str) -> dict[str, Any]:
        if service_code == "sagemaker":
            for q in sagemaker_quotas(self.region_name):
                if q["QuotaCode"] == quota_code:
                    return q
            raise NoSuchResource
        return original_get(self, service_code, quota_code)

    def list_paginated(self: Any) -> str:
        params = json.loads(self.body or "{}")
        quotas = self.backend.list_aws_default_service_quotas(str(params.get("ServiceCode")))
        start = int(params.get("NextToken") or 0)
        end = start + int(params.get("MaxResults") or 100)
        body: dict[str, Any] = {"Quotas": quotas[start:end]}
        if end < len(quotas):
            body["NextToken"] = str(end)
        return json.dumps(body)

    ServiceQuotasBackend.list_aws_default_service_quotas = list_quotas  # type: ignore[method-assign]
    ServiceQuotasBackend.get_service_quota = get_quota  # type: ignore[method-assign]
    ServiceQuotasResponse.list_service_quotas = list_paginated  # type: ignore[attr-defined]
    ServiceQuotasResponse.list_aws_default_service_quotas = list_paginated  # type: ignore[method-assign]
    ServiceQuotasResponse.get_aws_default_service_quota = ServiceQuotasResponse.get_service_quota  # type: ignore[attr-defined]
    ServiceQuotasBackend._podstart = True  # type: ignore[attr-defined]
