"""ListTags / AddTags / DeleteTags for HyperPod cluster ARNs (moto's tag store does not know the
sandbox's HyperPod clusters): a cluster's tags are the `Tags` it was created with, changed in place."""

from __future__ import annotations

from typing import Any

from sandbox.aws.runtime import RUNTIME
from sandbox.aws.sagemaker.store import store


def _cluster(region: str, arn: str) -> Any:
    for c in store(region).clusters.values():
        if c.arn == arn:
            return c
    return None


def patch() -> None:
    from moto.core.responses import ActionResult
    from moto.sagemaker.responses import SageMakerResponse

    original_list = SageMakerResponse.list_tags
    original_add = SageMakerResponse.add_tags
    original_delete = SageMakerResponse.delete_tags

    def list_tags(self: Any) -> Any:
        with RUNTIME.lock:
            c = _cluster(self.region, self._get_param("ResourceArn"))
            if c is not None:
                return ActionResult({"Tags": list(c.spec.get("Tags") or [])})
        return original_list(self)

    def add_tags(self: Any) -> Any:
        with RUNTIME.lock:
            c = _cluster(self.region, self._get_param("ResourceArn"))
            if c is not None:
                tags = {t["Key"]: t["Value"] for t in c.spec.get("Tags") or []}
                tags.update({t["Key"]: t["Value"] for t in self._get_param("Tags") or []})
                c.spec["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
                return ActionResult({"Tags": c.spec["Tags"]})
        return original_add(self)

    def delete_tags(self: Any) -> Any:
        with RUNTIME.lock:
            c = _cluster(self.region, self._get_param("ResourceArn"))
            if c is not None:
                drop = set(self._get_param("TagKeys") or [])
                c.spec["Tags"] = [t for t in c.spec.get("Tags") or [] if t["Key"] not in drop]
                return ActionResult({})
        return original_delete(self)

    SageMakerResponse.list_tags = list_tags  # type: ignore[method-assign]
    SageMakerResponse.add_tags = add_tags  # type: ignore[method-assign]
    SageMakerResponse.delete_tags = delete_tags  # type: ignore[method-assign]
