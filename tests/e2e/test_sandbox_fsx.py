"""FSx for Lustre on the sandbox, end to end: the create workflow waits for the file system to be
AVAILABLE (it starts CREATING, as in AWS), then its static volume binds in the cluster."""

from __future__ import annotations

import time
import uuid
from typing import Any


def test_a_cluster_with_fsx_waits_for_the_file_system_then_binds_its_volume(api: Any, aws: Any,
                                                                             sandbox: Any) -> None:
    cluster = f"fsx-{uuid.uuid4().hex[:6]}"
    body = {"name": cluster, "region": "us-west-2",
            "instance_groups": [{"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1,
                                 "availability_zone": "us-west-2a"}],
            "storage": {"s3": True, "fsx_lustre": {"storage_capacity_gib": 1200, "throughput_mb_per_tib": 250}}}
    mark = api.mark()
    r = api.post("/v1/clusters", json=body, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    done = api.wait_terminal(r.json()["id"], timeout=180)
    assert done["status"] == "SUCCEEDED", done.get("error")

    systems = [f for f in aws("fsx").describe_file_systems()["FileSystems"]
               if {"Key": "podstart:cluster", "Value": cluster} in f.get("Tags", [])]
    assert len(systems) == 1
    fs = systems[0]
    assert fs["Lifecycle"] == "AVAILABLE"
    # The storage step saw it CREATING and waited: more than one look at it before mounting it.
    looks = [c for c in api.calls(after=mark) if (c["service"], c["operation"]) == ("fsx", "DescribeFileSystems")]
    assert len(looks) >= 2, looks

    kube = sandbox.kube.store(cluster)
    deadline = time.monotonic() + 10
    while (pvc := kube.get("v1", "PersistentVolumeClaim", "podstart-fsx", "default"))["status"]["phase"] != "Bound":
        assert time.monotonic() < deadline, pvc["status"]
        time.sleep(0.1)
    pv = kube.get("v1", "PersistentVolume", "podstart-fsx")
    assert pv["spec"]["csi"]["volumeHandle"] == fs["FileSystemId"]
    assert pv["spec"]["csi"]["volumeAttributes"] == {"dnsname": fs["DNSName"],
                                                     "mountname": fs["LustreConfiguration"]["MountName"]}
    assert pvc["status"]["phase"] == "Bound" and pv["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
