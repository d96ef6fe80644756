"""/v1/catalog: inspect before create — regions, zones, instance types, training plans, quotas."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from functions.adapters import catalog_aws as catalog
from functions.api.context import json_response, model_response, principal, services
from functions.domain.catalog import REGION_PATTERN, Offerings
from functions.domain.training.mlflow import TrackingServerPage
from functions.logic.training import mlflow_servers

router = Router()

RegionQ = Annotated[str, Query(description="AWS region, e.g. us-west-2", pattern=REGION_PATTERN)]
TypeQ = Annotated[str | None, Query(description="Only this instance type, e.g. ml.p5.48xlarge", max_length=40,
                                    pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")]
ZoneQ = Annotated[str | None, Query(description="Zone name (us-west-2a) or id (usw2-az1); omit for the whole region",
                                    max_length=32)]


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
def list_instance_types(region: RegionQ, availability_zone: ZoneQ = None, instance_type: TypeQ = None) -> Response[str]:
    principal(router)
    items = [t for t in catalog.instance_types(region, availability_zone)
             if instance_type is None or t.name == instance_type]
    return json_response({"region": region, "availability_zone": availability_zone,
                          "items": [t.model_dump() for t in items]})


@router.get("/v1/catalog/training-plans", summary="The account's SageMaker training plans in a region",
            tags=["catalog"])
def list_training_plans(region: RegionQ, instance_type: TypeQ = None, availability_zone: ZoneQ = None) -> Response[str]:
    principal(router)
    loc = ("query", "availability_zone")
    zone = catalog.resolve_zone(region, availability_zone, loc) if availability_zone else None
    items = [p for p in catalog.training_plans(region)
             if (instance_type is None or p.instance_type == instance_type)
             and (zone is None or p.availability_zone in (zone.name, zone.id))]
    return json_response({"region": region, "items": [p.model_dump() for p in items]})


@router.get("/v1/catalog/quotas",
            summary="HyperPod cluster-usage quotas per instance type, and how many are in use",
            tags=["catalog"])
def get_quotas(region: RegionQ, instance_type: TypeQ = None) -> Response[str]:
    principal(router)
    items = [q for q in catalog.quotas(region) if instance_type is None or q.instance_type == instance_type]
    return json_response({"region": region, "items": [q.model_dump() for q in items]})


@router.get("/v1/catalog/offerings",
            summary="Where an instance type can run in a region: per zone offered, quota left, training plans "
                    "with free capacity, spot", tags=["catalog"],
            responses={200: {"description": "Offerings", "content": {"application/json": {"model": Offerings}}}})
def get_offerings(region: RegionQ, instance_type: Annotated[str, Query(
        description="HyperPod instance type, e.g. ml.p5.48xlarge", max_length=40,
        pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")]) -> Response[str]:
    principal(router)
    return json_response(catalog.offerings(region, instance_type).model_dump(mode="json"))


@router.get("/v1/catalog/mlflow-tracking-servers",
            summary="SageMaker managed MLflow tracking servers in a region, for a job's mlflow (status, URL, size)",
            tags=["catalog"],
            responses={200: {"description": "Tracking servers",
                             "content": {"application/json": {"model": TrackingServerPage}}}})
def list_mlflow_tracking_servers(
    region: RegionQ,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 20,
    next_token: Annotated[str | None, Query(description="Token from the previous page", max_length=2048,
                                            pattern=r"^[A-Za-z0-9+/=_.:-]{1,2048}$")] = None,
) -> Response[str]:
    principal(router)
    catalog.check_region(region)
    return model_response(mlflow_servers.servers_page(services(), region, limit, next_token))
