"""Price List Query API (`pricing:GetProducts`), seeded: moto has no pricing service, so the sandbox answers
it in the client hook (sandbox/aws/calls.py) with products shaped as AWS publishes them. Prices are the
on-demand list prices of the us-west-2 price list (Nov 2026), the same in every region here."""

from __future__ import annotations

import json
from typing import Any

PUBLICATION_DATE = "2026-11-30T00:00:00Z"

# HyperPod cluster usage, USD per instance-hour
HYPERPOD: dict[str, float] = {
    "ml.p5.48xlarge": 113.068, "ml.p5en.48xlarge": 123.84, "ml.p4d.24xlarge": 37.688, "ml.g5.8xlarge": 3.466,
    "ml.g5.12xlarge": 7.09, "ml.g5.48xlarge": 20.36, "ml.g6e.48xlarge": 37.66, "ml.trn1.32xlarge": 24.725,
    "ml.m5.2xlarge": 0.538, "ml.m5.xlarge": 0.269, "ml.c5.2xlarge": 0.476, "ml.c5.xlarge": 0.238,
    "ml.c5.large": 0.119, "ml.t3.medium": 0.065, "ml.t3.large": 0.13,
}
EKS_CLUSTER_HOURLY = 0.10
NAT_GATEWAY_HOURLY = 0.045
FSX_LUSTRE_P2_GB_MONTH: dict[str, float] = {"125": 0.145, "250": 0.21, "500": 0.34, "1000": 0.60}


def _product(attributes: dict[str, str], usd: float, unit: str) -> str:
    return json.dumps({
        "product": {"attributes": attributes},
        "terms": {"OnDemand": {"T.1": {"priceDimensions": {
            "T.1.D": {"unit": unit, "pricePerUnit": {"USD": f"{usd}"}}}}}},
        "publicationDate": PUBLICATION_DATE,
    })


def get_products(params: dict[str, Any]) -> dict[str, Any]:
    f = {x["Field"]: x["Value"] for x in params.get("Filters") or []}
    service, region = params.get("ServiceCode"), f.get("regionCode", "")
    items: list[str] = []
    if service == "AmazonSageMaker" and f.get("instanceName") in HYPERPOD and f.get("component") == "Cluster":
        items.append(_product({"regionCode": region, "instanceName": f["instanceName"], "component": "Cluster",
                               "usagetype": f"USW2-Cluster:{f['instanceName']}"}, HYPERPOD[f["instanceName"]], "Hrs"))
    elif service == "AmazonEKS":
        items += [_product({"regionCode": region, "usagetype": "USW2-AmazonEKS-Hours:extendedSupport"}, 0.60, "Hours"),
                  _product({"regionCode": region, "usagetype": "USW2-AmazonEKS-Hours:perCluster"},
                           EKS_CLUSTER_HOURLY, "Hours")]
    elif service == "AmazonEC2" and f.get("productFamily") == "NAT Gateway":
        items += [_product({"regionCode": region, "usagetype": "USW2-NatGateway-Bytes"}, 0.045, "GB"),
                  _product({"regionCode": region, "usagetype": "USW2-NatGateway-Hours"}, NAT_GATEWAY_HOURLY, "Hrs")]
    elif service == "AmazonFSx" and f.get("fileSystemType") == "Lustre" and f.get("deploymentOption") == "Persistent_2":
        price = FSX_LUSTRE_P2_GB_MONTH.get(str(f.get("throughputCapacity")))
        if price is not None:
            items.append(_product({"regionCode": region, "usagetype": "USW2-Lustre-P2-Storage"}, price, "GB-Mo"))
    return {"FormatVersion": "aws_v1", "PriceList": items, "ResponseMetadata": {"HTTPStatusCode": 200}}
