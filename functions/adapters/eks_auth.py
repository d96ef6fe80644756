"""EKS authentication without the kubernetes package: the IAM-signed bearer token and the CA file."""

from __future__ import annotations

import base64
import functools
import tempfile
import threading
import time
from typing import Any

_ca_files: dict[str, str] = {}
_lock = threading.Lock()
# EKS accepts a token for 15 minutes after it was signed (`aws eks get-token` tells kubectl to reuse it for 14):
# one is reused for 10: signing one is a request signature (the region's STS client is kept, see _sts).
TOKEN_REUSE_S = 600.0
_tokens: dict[tuple[str, str], tuple[float, str]] = {}


def eks_token(cluster_name: str, region: str) -> str:
    """The token `aws eks get-token` makes: a presigned sts:GetCallerIdentity URL naming the cluster (one signed
    less than TOKEN_REUSE_S ago is reused)."""
    now = time.monotonic()
    with _lock:
        signed = _tokens.get((cluster_name, region))
    if signed is not None and now - signed[0] < TOKEN_REUSE_S:
        return signed[1]
    token = _sign(cluster_name, region)
    with _lock:
        _tokens[(cluster_name, region)] = (now, token)
    return token


def _sign(cluster_name: str, region: str) -> str:
    url = _sts(region).generate_presigned_url("get_caller_identity", Params={"x-k8s-aws-id": cluster_name},
                                              ExpiresIn=60, HttpMethod="GET")
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


@functools.lru_cache(maxsize=32)
def _sts(region: str) -> Any:
    """One STS client per region that signs the cluster's name into the URL (a client costs ~50 ms to build; it
    is safe to share across threads, and the name travels in each request's own context)."""
    import boto3
    from botocore.config import Config

    sts = boto3.session.Session().client("sts", region_name=region, config=Config(signature_version="v4"))

    def inject(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["x-k8s-aws-id"] = params.pop("x-k8s-aws-id")

    def header(request: Any, **_: Any) -> None:
        request.headers["x-k8s-aws-id"] = request.context["x-k8s-aws-id"]

    sts.meta.events.register("provide-client-params.sts.GetCallerIdentity", inject)
    sts.meta.events.register("before-sign.sts.GetCallerIdentity", header)
    return sts


def _ca_file(ca_b64: str) -> str:
    with _lock:
        path = _ca_files.get(ca_b64)
        if path is None:
            f = tempfile.NamedTemporaryFile(prefix="podstart-ca-", suffix=".pem", delete=False)  # noqa: SIM115
            f.write(base64.b64decode(ca_b64))
            f.close()
            path = _ca_files[ca_b64] = f.name
        return path


