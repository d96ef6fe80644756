"""The embedded AWS: moto in server mode with PodStart's extensions, driven through the control
plane's own client factory (functions.adapters.aws.client)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from functions.adapters import aws as adapter
from sandbox.aws import EmbeddedAws

ROLE = "arn:aws:iam::123456789012:role/podstart-test"
LIFECYCLE = {"SourceS3Uri": "s3://sagemaker-lifecycle/scripts/", "OnCreate": "on_create.sh"}


class FakeKube:
    def __init__(self) -> None:
        self.clusters: dict[str, str] = {}

        self.versions: dict[str, str] = {}

    def add_cluster(self, name: str, version: str | None = None) -> str:
        self.clusters[name] = f"http://127.0.0.1:65000/{name}"
        self.versions[name] = version or "1.32"
        return self.clusters[name]

    def version_of(self, cluster: str) -> str:
        return self.versions.get(cluster, "1.32")

    def remove_cluster(self, name: str) -> None:
        self.clusters.pop(name, None)


class TransientError(Exception):
    pass


class PermanentError(Exception):
    pass


KUBE = FakeKube()
CALLS: dict[str, int] = {"flaky": 0}
DELIVERED: list[dict[str, Any]] = []


def flaky(event: dict[str, Any], context: Any) -> dict[str, Any]:
    CALLS["flaky"] += 1
    if CALLS["flaky"] < 3:
        raise TransientError("not yet")
    return {"attempt": CALLS["flaky"], "echo": event, "function": context.function_name}


def broken(event: dict[str, Any], context: Any) -> None:
    raise PermanentError("bad input")


def sink(event: dict[str, Any], context: Any) -> None:
    DELIVERED.append(event)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[EmbeddedAws]:
    embedded = EmbeddedAws(time_scale=600, kube=KUBE)
    embedded.start()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in embedded.env().items():
            mp.setenv(key, value)
        adapter._session.cache_clear()
        adapter.client.cache_clear()
        embedded.route_lambdas({"podstart-flaky": flaky, "podstart-broken": broken, "podstart-sink": sink})
        yield embedded
        adapter._session.cache_clear()
        adapter.client.cache_clear()
    embedded.stop()


def wait_for(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def run_execution(definition: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    sfn = adapter.client("stepfunctions")
    arn = sfn.create_state_machine(
        name=f"sm-{time.monotonic_ns()}", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps(payload))["executionArn"]
    return wait_for(  # type: ignore[no-any-return]
        lambda: (d := sfn.describe_execution(executionArn=execution))["status"] != "RUNNING" and d, 20
    )


def test_state_machine_retries_on_error_type_then_runs_the_routed_callable(sandbox: EmbeddedAws) -> None:
    # Given a Task that retries TransientError, and a handler that raises it twice
    definition = {
        "StartAt": "Step",
        "States": {
            "Step": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": sandbox.function_arn("podstart-flaky"), "Payload.$": "$"},
                "OutputPath": "$.Payload",
                "Retry": [
                    {
                        "ErrorEquals": ["TransientError"],
                        "IntervalSeconds": 1,
                        "MaxAttempts": 3,
                        "BackoffRate": 1.0,
                    }
                ],
                "End": True,
            }
        },
    }
    # When it runs
    result = run_execution(definition, {"cluster": "c1"})
    # Then the third attempt's result is the output
    assert result["status"] == "SUCCEEDED"
    assert json.loads(result["output"]) == {
        "attempt": 3,
        "echo": {"cluster": "c1"},
        "function": "podstart-flaky",
    }


def test_catch_matches_a_permanent_error_by_class_name(sandbox: EmbeddedAws) -> None:
    definition = {
        "StartAt": "Step",
        "States": {
            "Step": {
                "Type": "Task",
                "Resource": sandbox.function_arn("podstart-broken"),
                "Retry": [{"ErrorEquals": ["TransientError"], "MaxAttempts": 3}],
                "Catch": [{"ErrorEquals": ["PermanentError"], "ResultPath": "$.error", "Next": "Failed"}],
                "End": True,
            },
            "Failed": {"Type": "Pass", "End": True},
        },
    }
    result = run_execution(definition, {"x": 1})
    assert result["status"] == "SUCCEEDED"
    error = json.loads(result["output"])["error"]
    assert error["Error"] == "PermanentError"
    assert json.loads(error["Cause"])["errorMessage"] == "bad input"


def test_direct_invoke_reports_a_function_error(sandbox: EmbeddedAws) -> None:
    response = adapter.client("lambda").invoke(FunctionName="podstart-broken", Payload=b"{}")
    assert response["FunctionError"] == "Unhandled"
    assert json.loads(response["Payload"].read())["errorType"] == "PermanentError"


def _eks_cluster(name: str) -> dict[str, Any]:
    eks = adapter.client("eks")
    eks.create_cluster(name=name, roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1", "subnet-2"]})
    return wait_for(  # type: ignore[no-any-return]
        lambda: (c := eks.describe_cluster(name=name)["cluster"])["status"] == "ACTIVE" and c
    )


def test_eks_cluster_goes_creating_active_with_the_kube_endpoint_then_deletes(sandbox: EmbeddedAws) -> None:
    eks = adapter.client("eks")
    made = eks.create_cluster(name="eks-life", roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    # (~10 minutes of AWS time are 1 s here: on a busy machine a describe may already see it ACTIVE)
    assert made["cluster"]["status"] == "CREATING"

    cluster = wait_for(
        lambda: (c := eks.describe_cluster(name="eks-life")["cluster"])["status"] == "ACTIVE" and c
    )

    assert cluster["endpoint"] == KUBE.clusters["eks-life"]
    assert KUBE.version_of("eks-life") == cluster["version"]  # its API server says the version it was made with
    assert cluster["certificateAuthority"]["data"]
    with pytest.raises(ClientError) as duplicate:
        eks.create_cluster(name="eks-life", roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    assert duplicate.value.response["Error"]["Code"] == "ResourceInUseException"

    assert eks.delete_cluster(name="eks-life")["cluster"]["status"] == "DELETING"

    def gone() -> bool:
        try:
            eks.describe_cluster(name="eks-life")
        except ClientError as e:
            return e.response["Error"]["Code"] == "ResourceNotFoundException"
        return False

    wait_for(gone)
    assert "eks-life" not in KUBE.clusters


def test_addons_access_entries_and_pod_identity_lifecycle(sandbox: EmbeddedAws) -> None:
    eks = adapter.client("eks")
    _eks_cluster("eks-addons")

    assert eks.create_addon(clusterName="eks-addons", addonName="vpc-cni")["addon"]["status"] == "CREATING"
    wait_for(
        lambda: (
            eks.describe_addon(clusterName="eks-addons", addonName="vpc-cni")["addon"]["status"] == "ACTIVE"
        )
    )
    assert eks.list_addons(clusterName="eks-addons")["addons"] == ["vpc-cni"]
    versions = eks.describe_addon_versions(addonName="coredns")["addons"]
    assert versions[0]["addonVersions"][0]["addonVersion"].startswith("v1.")
    eks.update_addon(clusterName="eks-addons", addonName="vpc-cni", addonVersion="v1.19.3-eksbuild.1")
    assert eks.delete_addon(clusterName="eks-addons", addonName="vpc-cni")["addon"]["status"] == "DELETING"
    wait_for(lambda: eks.list_addons(clusterName="eks-addons")["addons"] == [])
    with pytest.raises(ClientError) as missing:
        eks.describe_addon(clusterName="eks-addons", addonName="vpc-cni")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"

    principal = "arn:aws:iam::123456789012:role/Admin"
    policy = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    eks.create_access_entry(clusterName="eks-addons", principalArn=principal, kubernetesGroups=["ops"])
    with pytest.raises(ClientError) as duplicate:
        eks.create_access_entry(clusterName="eks-addons", principalArn=principal)
    assert duplicate.value.response["Error"]["Code"] == "ResourceInUseException"
    entry = eks.describe_access_entry(clusterName="eks-addons", principalArn=principal)["accessEntry"]
    assert (entry["type"], entry["kubernetesGroups"]) == ("STANDARD", ["ops"])
    eks.associate_access_policy(
        clusterName="eks-addons", principalArn=principal, policyArn=policy, accessScope={"type": "cluster"}
    )
    associated = eks.list_associated_access_policies(clusterName="eks-addons", principalArn=principal)
    assert [p["policyArn"] for p in associated["associatedAccessPolicies"]] == [policy]
    eks.disassociate_access_policy(clusterName="eks-addons", principalArn=principal, policyArn=policy)
    eks.delete_access_entry(clusterName="eks-addons", principalArn=principal)
    assert eks.list_access_entries(clusterName="eks-addons")["accessEntries"] == []

    association = eks.create_pod_identity_association(
        clusterName="eks-addons", namespace="kube-system", serviceAccount="fsx-csi", roleArn=ROLE
    )["association"]
    assert association["associationId"].startswith("a-")
    listed = eks.list_pod_identity_associations(clusterName="eks-addons")["associations"]
    assert [a["serviceAccount"] for a in listed] == ["fsx-csi"]
    eks.delete_pod_identity_association(clusterName="eks-addons", associationId=association["associationId"])
    assert eks.list_pod_identity_associations(clusterName="eks-addons")["associations"] == []


def _vpc() -> tuple[str, str]:
    ec2 = adapter.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.1.0.0/20", AvailabilityZone="us-west-2b")["Subnet"]
    sg = ec2.create_security_group(GroupName=f"sg-{time.monotonic_ns()}", Description="t", VpcId=vpc)[
        "GroupId"
    ]
    return subnet["SubnetId"], sg


def _group(name: str, instance_type: str, count: int, **extra: Any) -> dict[str, Any]:
    return {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "LifeCycleConfig": LIFECYCLE,
        "ExecutionRole": ROLE,
        **extra,
    }


def _hyperpod(name: str, groups: list[dict[str, Any]], **extra: Any) -> str:
    subnet, sg = _vpc()
    return adapter.client("sagemaker").create_cluster(  # type: ignore[no-any-return]
        ClusterName=name,
        InstanceGroups=groups,
        VpcConfig={"SecurityGroupIds": [sg], "Subnets": [subnet]},
        **extra,
    )["ClusterArn"]


def _in_service(name: str) -> dict[str, Any]:
    sm = adapter.client("sagemaker")
    return wait_for(  # type: ignore[no-any-return]
        lambda: (d := sm.describe_cluster(ClusterName=name))["ClusterStatus"] == "InService" and d
    )


def test_hyperpod_create_keeps_the_request_and_goes_in_service(sandbox: EmbeddedAws) -> None:
    sm = adapter.client("sagemaker")
    eks_arn = _eks_cluster("eks-for-hp")["arn"]
    plan = sm.list_training_plans()["TrainingPlanSummaries"][0]
    gpu = _group(
        "gpu",
        plan["ReservedCapacitySummaries"][0]["InstanceType"],
        2,
        TrainingPlanArn=plan["TrainingPlanArn"],
        OnStartDeepHealthChecks=["InstanceStress", "InstanceConnectivity"],
        NetworkInterface={"InterfaceType": "efa"},
        KubernetesConfig={"Labels": {"team": "ml"}},
    )
    _hyperpod(
        "hp-create",
        [gpu, _group("cpu", "ml.m5.2xlarge", 1, CapacityRequirements={"OnDemand": {}})],
        Orchestrator={"Eks": {"ClusterArn": eks_arn}},
        NodeRecovery="Automatic",
        NodeProvisioningMode="Continuous",
    )

    described = sm.describe_cluster(ClusterName="hp-create")
    assert described["ClusterStatus"] == "Creating"
    assert described["Orchestrator"] == {"Eks": {"ClusterArn": eks_arn}}
    assert (described["NodeRecovery"], described["NodeProvisioningMode"]) == ("Automatic", "Continuous")
    groups = {g["InstanceGroupName"]: g for g in described["InstanceGroups"]}
    assert groups["gpu"]["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert groups["gpu"]["TrainingPlanArn"] == plan["TrainingPlanArn"]
    assert groups["gpu"]["NetworkInterface"] == {"InterfaceType": "efa"}
    assert groups["gpu"]["KubernetesConfig"]["DesiredLabels"] == {"team": "ml"}
    assert groups["cpu"]["CapacityRequirements"] == {"OnDemand": {}}
    assert (groups["gpu"]["CurrentCount"], groups["gpu"]["TargetCount"]) == (0, 2)

    done = _in_service("hp-create")
    assert {g["InstanceGroupName"]: g["CurrentCount"] for g in done["InstanceGroups"]} == {"gpu": 2, "cpu": 1}
    nodes = sm.list_cluster_nodes(ClusterName="hp-create")["ClusterNodeSummaries"]
    assert all(
        n["InstanceId"].startswith("i-0") and n["InstanceStatus"]["Status"] == "Running" for n in nodes
    )
    node = sm.describe_cluster_node(ClusterName="hp-create", NodeId=nodes[0]["InstanceId"])["NodeDetails"]
    assert node["Placement"]["AvailabilityZone"].startswith("us-west-2")
    assert sm.list_cluster_events(ClusterName="hp-create")["Events"]


def test_unknown_instance_type_is_rejected_and_current_ones_accepted(sandbox: EmbeddedAws) -> None:
    with pytest.raises(ClientError) as bad:
        _hyperpod("hp-bad", [_group("g", "ml.p9.96xlarge", 1)])
    assert bad.value.response["Error"]["Code"] == "ValidationException"
    _hyperpod("hp-g6e", [_group("g", "ml.g6e.48xlarge", 1)])  # not in moto's old allow-list


def test_cluster_nodes_paginate(sandbox: EmbeddedAws) -> None:
    sm = adapter.client("sagemaker")
    _hyperpod("hp-pages", [_group("workers", "ml.c5.2xlarge", 5)])
    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        kwargs = {"NextToken": token} if token else {}
        page = sm.list_cluster_nodes(ClusterName="hp-pages", MaxResults=2, **kwargs)
        seen += [n["InstanceId"] for n in page["ClusterNodeSummaries"]]
        pages += 1
        token = page.get("NextToken")
        if not token:
            break
    assert pages == 3
    assert len(seen) == len(set(seen)) == 5


def test_update_cluster_changes_instance_group_counts(sandbox: EmbeddedAws) -> None:
    sm = adapter.client("sagemaker")
    _hyperpod("hp-update", [_group("cpu", "ml.t3.medium", 1)])
    _in_service("hp-update")

    sm.update_cluster(
        ClusterName="hp-update",
        InstanceGroups=[_group("cpu", "ml.t3.medium", 3), _group("new", "ml.m5.2xlarge", 1)],
    )
    assert sm.describe_cluster(ClusterName="hp-update")["ClusterStatus"] == "Updating"

    done = _in_service("hp-update")
    counts = {g["InstanceGroupName"]: (g["CurrentCount"], g["TargetCount"]) for g in done["InstanceGroups"]}
    assert counts == {"cpu": (3, 3), "new": (1, 1)}


def test_training_plans_are_seeded(sandbox: EmbeddedAws) -> None:
    plans = adapter.client("sagemaker").list_training_plans()["TrainingPlanSummaries"]
    by_type = {p["ReservedCapacitySummaries"][0]["InstanceType"]: p for p in plans}
    assert by_type["ml.p5.48xlarge"]["TotalInstanceCount"] == 4
    assert by_type["ml.p5en.48xlarge"]["TotalInstanceCount"] == 2
    assert all(p["Status"] == "Active" and p["TargetResources"] == ["hyperpod-cluster"] for p in plans)
    described = adapter.client("sagemaker").describe_training_plan(
        TrainingPlanName=plans[0]["TrainingPlanName"]
    )
    assert described["ReservedCapacitySummaries"][0]["AvailabilityZone"].startswith("us-west-2")


def test_sagemaker_cluster_usage_quotas(sandbox: EmbeddedAws) -> None:
    sq = adapter.client("service-quotas")
    quotas = [
        q
        for page in sq.get_paginator("list_service_quotas").paginate(ServiceCode="sagemaker")
        for q in page["Quotas"]
    ]
    values = {q["QuotaName"]: q["Value"] for q in quotas}
    assert values["ml.p5.48xlarge for cluster usage"] == 4
    assert values["ml.p5en.48xlarge for cluster usage"] == 2
    assert values["ml.g5.8xlarge for cluster usage"] == 16
    p5 = next(q for q in quotas if q["QuotaName"] == "ml.p5.48xlarge for cluster usage")
    assert p5["QuotaCode"].startswith("L-")
    assert sq.get_service_quota(ServiceCode="sagemaker", QuotaCode=p5["QuotaCode"])["Quota"]["Value"] == 4


def test_instance_types_and_offerings_for_hyperpod_types(sandbox: EmbeddedAws) -> None:
    ec2 = adapter.client("ec2")
    types = {
        t["InstanceType"]: t
        for t in ec2.describe_instance_types(
            InstanceTypes=[
                "p5.48xlarge",
                "p5en.48xlarge",
                "p4d.24xlarge",
                "g5.8xlarge",
                "g6e.48xlarge",
                "trn1.32xlarge",
            ]
        )["InstanceTypes"]
    }
    assert types["p5.48xlarge"]["GpuInfo"]["Gpus"][0]["Name"] == "H100"
    assert types["p5.48xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"] == 32
    assert types["g6e.48xlarge"]["GpuInfo"]["Gpus"][0]["Count"] == 8
    assert types["trn1.32xlarge"]["NeuronInfo"]["NeuronDevices"][0]["Count"] == 16
    assert all(t["NetworkInfo"]["EfaSupported"] for t in types.values())
    offerings = ec2.describe_instance_type_offerings(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": ["trn1.32xlarge"]}]
    )["InstanceTypeOfferings"]
    zones = {z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]}
    assert 0 < len({o["Location"] for o in offerings}) < len(zones)


def test_call_log_records_operations_with_outcome(sandbox: EmbeddedAws) -> None:
    sandbox.calls.clear()
    sm = adapter.client("sagemaker")
    sm.list_clusters()
    with pytest.raises(ClientError):
        sm.describe_cluster(ClusterName="does-not-exist")
    records = sandbox.calls.records(service="sagemaker")
    assert [(r["operation"], r["outcome"]) for r in records] == [
        ("ListClusters", "ok"),
        ("DescribeCluster", "ResourceNotFound"),
    ]
    assert records[1]["params"] == {"ClusterName": "does-not-exist"}
    assert sandbox.calls.records(operation="ListClusters")[0]["time"].endswith("+00:00")


def test_fault_injected_twice_fails_exactly_two_calls(sandbox: EmbeddedAws) -> None:
    sandbox.calls.clear()
    sandbox.faults.add("eks", "ListClusters", "ThrottlingException", count=2, status_code=400)
    eks = adapter.client("eks")
    codes = []
    for _ in range(3):
        try:
            eks.list_clusters()
            codes.append("ok")
        except ClientError as e:
            codes.append(e.response["Error"]["Code"])
    assert codes == ["ThrottlingException", "ThrottlingException", "ok"]
    assert [r["outcome"] for r in sandbox.calls.records("eks", "ListClusters")] == codes
    assert sandbox.faults.list() == []


def test_eventbridge_rule_with_lambda_target_delivers(sandbox: EmbeddedAws) -> None:
    events = adapter.client("events")
    events.put_rule(Name="to-sink", EventPattern=json.dumps({"source": ["podstart.test", "aws.states"]}))
    events.put_targets(Rule="to-sink", Targets=[{"Id": "sink", "Arn": sandbox.function_arn("podstart-sink")}])

    events.put_events(Entries=[{"Source": "podstart.test", "DetailType": "Ping", "Detail": '{"n": 1}'}])
    run_execution({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}, {})

    wait_for(lambda: any(e["source"] == "podstart.test" and e["detail"] == {"n": 1} for e in DELIVERED))
    wait_for(
        lambda: any(e["source"] == "aws.states" and e["detail"]["status"] == "SUCCEEDED" for e in DELIVERED)
    )


def _subnet_and_group() -> tuple[str, str, str]:
    ec2 = adapter.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.77.0.0/20", AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName=f"fsx-{time.monotonic_ns()}", Description="fsx", VpcId=vpc)["GroupId"]
    return vpc, subnet, group


def _lustre(subnet: str, group: str, token: str, **over: Any) -> dict[str, Any]:
    return {"FileSystemType": "LUSTRE", "StorageCapacity": 1200, "SubnetIds": [subnet], "SecurityGroupIds": [group],
            "LustreConfiguration": {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 250},
            "Tags": [{"Key": "podstart:cluster", "Value": "fsx-demo"}], "ClientRequestToken": token, **over}


def test_fsx_lustre_goes_creating_available_then_deleting_and_gone(sandbox: EmbeddedAws) -> None:
    fsx = adapter.client("fsx")
    vpc, subnet, group = _subnet_and_group()
    created = fsx.create_file_system(**_lustre(subnet, group, "token-fsx-1"))["FileSystem"]
    fs_id = created["FileSystemId"]
    assert created["Lifecycle"] == "CREATING"
    # The same ClientRequestToken is the same file system, as in FSx.
    assert fsx.create_file_system(**_lustre(subnet, group, "token-fsx-1"))["FileSystem"]["FileSystemId"] == fs_id

    fs = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert fs["Lifecycle"] == "CREATING" and fs["VpcId"] == vpc and fs["OwnerId"] == "123456789012"
    assert fs["DNSName"] == f"{fs_id}.fsx.us-west-2.amazonaws.com"
    lustre = fs["LustreConfiguration"]
    assert lustre["DeploymentType"] == "PERSISTENT_2" and lustre["PerUnitStorageThroughput"] == 250
    assert len(lustre["MountName"]) == 8 and lustre["MountName"].isalnum()
    assert {"Key": "podstart:cluster", "Value": "fsx-demo"} in fs["Tags"]
    assert "FailureDetails" not in fs

    available = wait_for(lambda: (f := fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0])
                         ["Lifecycle"] == "AVAILABLE" and f)
    assert available["LustreConfiguration"]["MountName"] == lustre["MountName"]
    assert fs_id in {f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]}

    deleted = fsx.delete_file_system(FileSystemId=fs_id)
    assert deleted["Lifecycle"] == "DELETING"
    assert fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "DELETING"

    def gone() -> bool:
        try:
            fsx.describe_file_systems(FileSystemIds=[fs_id])
        except ClientError as e:
            return e.response["Error"]["Code"] == "FileSystemNotFound"
        return False

    wait_for(gone)
    assert fs_id not in {f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]}


def test_fsx_persistent_2_takes_minutes_on_the_time_scale(sandbox: EmbeddedAws) -> None:
    """~12 min in AWS for PERSISTENT_2: at time scale 600 that is over a second, not immediate."""
    fsx = adapter.client("fsx")
    _, subnet, group = _subnet_and_group()
    started = time.monotonic()
    fs_id = fsx.create_file_system(**_lustre(subnet, group, "token-fsx-2"))["FileSystem"]["FileSystemId"]
    wait_for(lambda: fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "AVAILABLE")
    elapsed = time.monotonic() - started
    assert 600 / sandbox.time_scale <= elapsed <= 900 / sandbox.time_scale + 10, elapsed  # not at once, nor stuck
