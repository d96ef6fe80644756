"""/v1/catalog: inspect before create — regions, zones, instance types, training plans, quotas."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from functions.adapters import catalog_aws as catalog
from functions.api.context import json_response, principal

router = Router()

RegionQ = Annotated[str, Query(description="AWS region, e.g. us-west-2", pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")]


@router.get("/v1/catalog/regions", summary="Regions where SageMaker HyperPod runs", tags=["catalog"])
def list_regions() -> Response[str]:
    principal(router)
    return json_response({"items": [r.model_dump() for r in catalog.regions()]})


@router.get("/v1/catalog/availability-zones", summary="Availability zones of a region (names and zone ids)",
            tags=["catalog"])
def list_availability_zones(region: RegionQ) -> Response[str]:
    principal(router)
    return json_response({"region": region, "items": [z.model_dump() for z in catalog.availability_zones(region)]})


@router.get("/v1/catalog/instance-types",
            summary="HyperPod instance types offered in a region or zone, with accelerators and EFA",
            tags=["catalog"])
def list_instance_types(
    region: RegionQ,
    availability_zone: Annotated[str | None, Query(
        description="Zone name (us-west-2a) or id (usw2-az1); omit for the whole region", max_length=32)] = None,
) -> Response[str]:
    principal(router)
    items = catalog.instance_types(region, availability_zone)
    return json_response({"region": region, "availability_zone": availability_zone,
                          "items": [t.model_dump() for t in items]})


@router.get("/v1/catalog/training-plans", summary="The account's SageMaker training plans in a region",
            tags=["catalog"])
def list_training_plans(region: RegionQ) -> Response[str]:
    principal(router)
    return json_response({"region": region, "items": [p.model_dump() for p in catalog.training_plans(region)]})


@router.get("/v1/catalog/quotas",
            summary="HyperPod cluster-usage quotas per instance type, and how many are in use",
            tags=["catalog"])
def get_quotas(region: RegionQ) -> Response[str]:
    principal(router)
    return json_response({"region": region, "items": [q.model_dump() for q in catalog.quotas(region)]})
