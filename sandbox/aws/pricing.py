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
    # the other accelerated types the capacity advisor ranks
    "ml.p5.4xlarge": 14.13, "ml.p5e.48xlarge": 123.84, "ml.p4de.24xlarge": 47.11, "ml.p6-b200.48xlarge": 158.4,
    "ml.p6-b300.48xlarge": 205.0, "ml.trn1n.32xlarge": 28.498, "ml.trn2.48xlarge": 62.2,
    "ml.g5.xlarge": 1.408, "ml.g5.2xlarge": 1.694, "ml.g5.4xlarge": 2.27, "ml.g5.16xlarge": 5.672,
    "ml.g5.24xlarge": 10.18, "ml.g6.xlarge": 1.127, "ml.g6.2xlarge": 1.362, "ml.g6.4xlarge": 1.829,
    "ml.g6.8xlarge": 2.764, "ml.g6.12xlarge": 6.558, "ml.g6.16xlarge": 4.636, "ml.g6.24xlarge": 9.305,
    "ml.g6.48xlarge": 18.61, "ml.g6e.xlarge": 2.337, "ml.g6e.2xlarge": 2.828, "ml.g6e.4xlarge": 3.81,
    "ml.g6e.8xlarge": 5.775, "ml.g6e.12xlarge": 12.99, "ml.g6e.16xlarge": 9.707, "ml.g6e.24xlarge": 18.85,
    "ml.g4dn.xlarge": 0.736, "ml.g4dn.2xlarge": 1.053, "ml.g4dn.4xlarge": 1.686, "ml.g4dn.8xlarge": 3.046,
    "ml.g4dn.12xlarge": 5.477, "ml.g4dn.16xlarge": 6.09,
}
# Training plans (SearchTrainingPlanOfferings' UpfrontFee = instances x hours x this), USD per instance-hour
PLAN_HOURLY: dict[str, float] = {
    "ml.p4d.24xlarge": 24.5, "ml.p4de.24xlarge": 30.6, "ml.p5.48xlarge": 73.5, "ml.p5.4xlarge": 9.2,
    "ml.p5e.48xlarge": 80.5, "ml.p5en.48xlarge": 80.5, "ml.p6-b200.48xlarge": 103.0, "ml.p6-b300.48xlarge": 133.3,
    "ml.p6e-gb200.36xlarge": 98.0, "ml.trn1.32xlarge": 16.1, "ml.trn2.48xlarge": 40.4,
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
