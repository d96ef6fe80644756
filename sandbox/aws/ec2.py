"""EC2 extensions: moto 5.2 already ships real describe_instance_types and per-AZ offerings for the HyperPod
types (GpuInfo, NeuronInfo, EfaInfo), checked here; GetSpotPlacementScores (moto has none) is seeded.

Spot placement scores (1-10, per zone id with SingleAvailabilityZone, else per region) follow how scarce the
type is: small GPU instances score high, the largest accelerated instances low, fewer when more are asked for, with
a fixed per-zone spread; the same question always gets the same answer. Types a zone does not offer are left out.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

HYPERPOD_EC2_TYPES = (
    "p5.48xlarge",
    "p5en.48xlarge",
    "p4d.24xlarge",
    "g5.8xlarge",
    "g6e.48xlarge",
    "trn1.32xlarge",
)
# EC2 family prefix -> base score (the first match wins; anything else scores 8)
SPOT_BASE: tuple[tuple[str, int], ...] = (
    ("p6", 1), ("p5e", 2), ("p5.48", 3), ("p5.4", 6), ("p4", 4), ("trn", 3), ("g6e.48", 5), ("g", 9),
)


def spot_score(region: str, zone_id: str, ec2_type: str, count: int) -> int:
    base = next((score for prefix, score in SPOT_BASE if ec2_type.startswith(prefix)), 8)
    crowd = max(0, math.floor(math.log2(max(count, 1) / 4))) if count > 4 else 0
    spread = int(hashlib.sha1(f"{region}|{zone_id}|{ec2_type}".encode()).hexdigest(), 16) % 3 - 1
    return max(1, min(10, base - crowd + spread))


def placement_scores(region: str, types: list[str], count: int, single_zone: bool,
                     regions: list[str]) -> list[dict[str, Any]]:
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend
    from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS

    out = []
    for r in regions or [region]:
        offered = {(o["Location"], o["InstanceType"]) for o in INSTANCE_TYPE_OFFERINGS["availability-zone"].get(r, [])}
        zones = [z for z in RegionsAndZonesBackend.zones.get(r, []) if z.zone_type == "availability-zone"]
        per_zone = {z.zone_id: [spot_score(r, z.zone_id, t, count) for t in types if (z.name, t) in offered]
                    for z in zones}
        per_zone = {zid: scores for zid, scores in per_zone.items() if scores}
        if single_zone:
            out += [{"Region": r, "AvailabilityZoneId": zid, "Score": max(scores)}
                    for zid, scores in sorted(per_zone.items())]
        elif per_zone:
            out.append({"Region": r, "Score": min(10, max(max(s) for s in per_zone.values()) + 1)})
    return out


def patch() -> None:
    """Fail fast if a moto upgrade drops the instance type data the catalog relies on; add
    GetSpotPlacementScores to moto's EC2 responses."""
    from moto.core.responses import ActionResult
    from moto.ec2.models.instance_types import INSTANCE_TYPES
    from moto.ec2.responses import EC2Response

    missing = [t for t in HYPERPOD_EC2_TYPES if t not in INSTANCE_TYPES]
    if missing:
        raise RuntimeError(f"moto lacks EC2 instance type data for {missing}")

    def get_spot_placement_scores(self: Any) -> Any:
        types = list(self._get_param("InstanceTypes") or [])
        count = int(self._get_param("TargetCapacity") or 1)
        single = str(self._get_param("SingleAvailabilityZone") or "false").lower() == "true"
        regions = list(self._get_param("RegionNames") or [])
        return ActionResult({"SpotPlacementScores": placement_scores(self.region, types, count, single, regions)})

    EC2Response.get_spot_placement_scores = get_spot_placement_scores  # type: ignore[attr-defined]
