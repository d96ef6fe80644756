"""kubectl 1.32 and the aws CLI against a cluster the sandbox created, typed as a user types them: no extra flag
(no --validate=false, no --server), each command's output checked for what a real API server or AWS says.

The README's sandbox section lists these commands and the differences left. One cluster (one GPU node, two CPU
nodes, metrics-server on) serves every test here; kubectl gets its kubeconfig from `aws eks update-kubeconfig`.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import cli_tools
from tests.e2e.conftest import Api, eventually

KUBECTL = cli_tools.kubectl()
AWS = cli_tools.aws()
pytestmark = pytest.mark.skipif(KUBECTL is None or AWS is None,
                                reason="kubectl 1.32 and the aws CLI are installed by `make cli` (make test does it)")
REGION = "us-west-2"
NS = "fidelity"
GPU_GROUP = "sagemaker.amazonaws.com/instance-group-name"


@pytest.fixture(scope="module")
def cluster(api: Api) -> str:
    name = api.make_cluster("fid", [
        {"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 1, "availability_zone": "us-west-2a"},
        {"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 2, "availability_zone": "us-west-2a"},
    ])
    r = api.http.patch(f"/v1/clusters/{name}/features", json={"metrics_server": {"enabled": True}})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    return name


@pytest.fixture(scope="module")
def env(sandbox: Any, cluster: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("cli-home")
    out = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "KUBE"))}
    out.update({
        "HOME": str(home), "KUBECONFIG": str(home / "kubeconfig"), "KUBECACHEDIR": str(home / "kube-cache"),
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT_URL": sandbox.aws.endpoint,  # what `aws --endpoint-url` would say on every command
        "PATH": f"{Path(str(AWS)).parent}{os.pathsep}{Path(str(KUBECTL)).parent}{os.pathsep}{os.environ['PATH']}",
    })
    return out


def run(env: dict[str, str], *args: str, ok: bool = True, stdin: str | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=90, input=stdin, cwd=cwd)
    if ok:
        assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done


def kubectl(env: dict[str, str], *args: str, ok: bool = True, stdin: str | None = None) -> str:
    done = run(env, str(KUBECTL), *args, ok=ok, stdin=stdin)
    return done.stdout if ok else done.stdout + done.stderr


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """kubectl's table output as (header, rows), split on runs of 2+ spaces (cells may hold one space)."""
    import re

    lines = [ln for ln in text.splitlines() if ln.strip()]
    cut = [re.split(r"\s{2,}", ln.strip()) for ln in lines]
    return cut[0], cut[1:]


def applied(env: dict[str, str], manifest: str, *flags: str, ok: bool = True) -> str:
    return kubectl(env, "apply", "-f", "-", *flags, stdin=manifest, ok=ok)


# ------------------------------------------------------------------------------------------------ getting in


def test_update_kubeconfig_then_kubectl_reaches_the_cluster(env: dict[str, str], cluster: str) -> None:
    out = run(env, str(AWS), "eks", "update-kubeconfig", "--name", cluster).stdout
    assert f"Added new context arn:aws:eks:{REGION}:123456789012:cluster/{cluster}" in out
    assert kubectl(env, "config", "current-context").strip() == f"arn:aws:eks:{REGION}:123456789012:cluster/{cluster}"
    version = json.loads(run(env, str(AWS), "eks", "describe-cluster", "--name", cluster).stdout)["cluster"]["version"]
    assert f"Server Version: v{version}." in kubectl(env, "version")  # the version the cluster was made with
    assert "Kubernetes control plane is running at http://127.0.0.1:" in kubectl(env, "cluster-info")


def test_discovery_and_raw_paths(env: dict[str, str]) -> None:
    resources = kubectl(env, "api-resources")
    for line in ("pods", "po", "v1", "true", "Pod"), ("deployments", "deploy", "apps/v1", "true", "Deployment"), \
            ("selfsubjectaccessreviews", "authorization.k8s.io/v1", "false", "SelfSubjectAccessReview"):
        assert any(all(cell in row.split() for cell in line) for row in resources.splitlines()), line
    assert "metrics.k8s.io/v1beta1" in kubectl(env, "api-versions").split()
    raw = json.loads(kubectl(env, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"))
    assert raw["kind"] == "NodeMetricsList" and len(raw["items"]) == 3
    assert kubectl(env, "get", "--raw", "/readyz").strip() == "ok"
    index = json.loads(kubectl(env, "get", "--raw", "/openapi/v3"))
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1"} <= set(index["paths"])


# ------------------------------------------------------------------------------------------------ nodes


def test_get_nodes_prints_the_servers_columns(env: dict[str, str], cluster: str) -> None:
    version = json.loads(run(env, str(AWS), "eks", "describe-cluster", "--name", cluster).stdout)["cluster"]["version"]
    header, rows = table(kubectl(env, "get", "nodes"))
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert len(rows) == 3
    assert all(r[0].startswith("hyperpod-i-") and r[1] == "Ready" and r[2] == "<none>"
               and r[4].startswith(f"v{version}.") for r in rows)
    wide, rows = table(kubectl(env, "get", "nodes", "-o", "wide"))
    assert wide[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert all(r[5].startswith("10.") and r[9].startswith("containerd://") for r in rows)
    labelled, rows = table(kubectl(env, "get", "nodes", "-L", GPU_GROUP))
    assert labelled[-1] == "INSTANCE-GROUP-NAME" and sorted(r[-1] for r in rows) == ["cpu", "cpu", "gpu"]


def test_describe_node_and_top_nodes(env: dict[str, str]) -> None:
    gpu = kubectl(env, "get", "nodes", "-l", f"{GPU_GROUP}=gpu", "-o", "name").strip()
    described = kubectl(env, "describe", gpu)
    assert "Capacity:" in described and "nvidia.com/gpu:" in described and "Non-terminated Pods:" in described
    header, rows = table(kubectl(env, "top", "nodes"))
    assert header == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert len(rows) == 3 and all(r[1].endswith("m") and r[2].endswith("%") and r[3].endswith("Mi") for r in rows)


# ------------------------------------------------------------------------------------------------ imperative (protobuf)


def test_imperative_creates_send_protobuf_and_are_stored_as_sent(env: dict[str, str]) -> None:
    assert kubectl(env, "create", "namespace", NS).strip() == f"namespace/{NS} created"
    assert kubectl(env, "get", "ns", NS, "-o", "jsonpath={.status.phase}") == "Active"
    assert "secret/creds created" in kubectl(env, "create", "secret", "generic", "creds", "-n", NS,
                                             "--from-literal=token=s3cr3t", "--from-literal=user=ml")
    data = json.loads(kubectl(env, "get", "secret", "creds", "-n", NS, "-o", "jsonpath={.data}"))
    assert {k: base64.b64decode(v).decode() for k, v in data.items()} == {"token": "s3cr3t", "user": "ml"}
    header, rows = table(kubectl(env, "get", "secrets", "-n", NS))
    assert header == ["NAME", "TYPE", "DATA", "AGE"] and rows[0][:3] == ["creds", "Opaque", "2"]
    kubectl(env, "create", "configmap", "settings", "-n", NS, "--from-literal=epochs=3", "--from-literal=lr=0.1")
    assert json.loads(kubectl(env, "get", "cm", "settings", "-n", NS, "-o", "jsonpath={.data}")) == {
        "epochs": "3", "lr": "0.1"}
    assert "serviceaccount/trainer created" in kubectl(env, "create", "serviceaccount", "trainer", "-n", NS)
    token = kubectl(env, "create", "token", "trainer", "-n", NS, "--duration=20m").strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == f"system:serviceaccount:{NS}:trainer" and claims["exp"] - claims["iat"] == 1200
    for args, said in (
        (("priorityclass", "fid-high", "--value=1000", "--description=fidelity"), "priorityclass.scheduling.k8s.io/"),
        (("quota", "fid-quota", "-n", NS, "--hard=pods=20,requests.nvidia.com/gpu=4"), "resourcequota/fid-quota"),
        (("cronjob", "nightly", "-n", NS, "--image=busybox:1.36", "--schedule=0 2 * * *", "--", "date"),
         "cronjob.batch/nightly"),
        (("ingress", "web", "-n", NS, "--rule=ml.example.com/=web:80"), "ingress.networking.k8s.io/web"),
        (("pdb", "web", "-n", NS, "--selector=app=web", "--min-available=1"), "poddisruptionbudget.policy/web"),
    ):
        assert said in kubectl(env, "create", *args)
    assert kubectl(env, "get", "priorityclass", "fid-high", "-o", "jsonpath={.value}") == "1000"
    header, rows = table(kubectl(env, "get", "cronjobs", "-n", NS))
    assert header[:4] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND"] and rows[0][1] == "0 2 * * *"


def test_a_secret_applied_with_string_data_keeps_it_in_data(env: dict[str, str]) -> None:
    applied(env, f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf-token\n  namespace: {NS}\n"
                 "stringData:\n  token: hf_abc\n")
    secret = json.loads(kubectl(env, "get", "secret", "hf-token", "-n", NS, "-o", "json"))
    assert "stringData" not in secret and base64.b64decode(secret["data"]["token"]).decode() == "hf_abc"
    assert secret["type"] == "Opaque"


# ------------------------------------------------------------------------------------------------ declarative


DEPLOYMENT = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: {NS}
  labels: {{app: api}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec:
      containers:
      - name: api
        image: nginx:1.27
        ports: [{{containerPort: 80}}]
"""


def test_apply_validates_against_the_servers_schema(env: dict[str, str]) -> None:
    assert applied(env, DEPLOYMENT).strip() == "deployment.apps/api created"
    assert applied(env, DEPLOYMENT).strip() == "deployment.apps/api unchanged"
    bigger = DEPLOYMENT.replace("replicas: 2", "replicas: 3")
    diff = run(env, str(KUBECTL), "diff", "-f", "-", stdin=bigger, ok=False)
    assert diff.returncode == 1 and "-  replicas: 2" in diff.stdout and "+  replicas: 3" in diff.stdout
    assert applied(env, bigger).strip() == "deployment.apps/api configured"
    assert kubectl(env, "get", "deploy", "api", "-n", NS, "-o", "jsonpath={.spec.replicas}") == "3"
    typo = bigger.replace("image: nginx:1.27", "image: nginx:1.27\n        imagePullPolice: Always")
    refused = applied(env, typo, ok=False)
    assert 'strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolice"' in refused
    assert "serverside-applied" in applied(env, bigger, "--server-side", "--force-conflicts")
    assert "created" in applied(env, bigger.replace("name: api\n", "name: api-dry\n"), "--dry-run=server")
    assert kubectl(env, "get", "deploy", "-n", NS, "-o", "name").split() == ["deployment.apps/api"]
    cm = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: {NS}\ndata:\n  a: '1'\n"
    assert kubectl(env, "create", "-f", "-", stdin=cm).strip() == "configmap/plain created"
    assert kubectl(env, "replace", "-f", "-", stdin=cm.replace("'1'", "'2'")).strip() == "configmap/plain replaced"
    # --validate=warn: kubectl prints the server's warning and the server drops the field, as Go decoding does
    loose = run(env, str(KUBECTL), "apply", "-f", "-", "--validate=warn",
                stdin=typo.replace("name: api\n", "name: loose\n"))
    assert 'Warning: unknown field "spec.template.spec.containers[0].imagePullPolice"' in loose.stderr
    kept = json.loads(kubectl(env, "get", "deploy", "loose", "-n", NS, "-o", "jsonpath={.spec.template.spec}"))
    assert kept["containers"][0]["name"] == "loose" and "imagePullPolice" not in kept["containers"][0]


def test_explain_reads_the_openapi_documents(env: dict[str, str]) -> None:
    out = kubectl(env, "explain", "deployment.spec.strategy")
    assert "KIND:       Deployment" in out and "FIELD: strategy <DeploymentStrategy>" in out
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out
    assert "containers\t<[]Container> -required-" in kubectl(env, "explain", "pod.spec")


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: checkpoints.fidelity.podstart.dev}
spec:
  group: fidelity.podstart.dev
  scope: Namespaced
  names: {kind: Checkpoint, plural: checkpoints, singular: checkpoint, shortNames: [ckpt]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Step, type: integer, jsonPath: .spec.step}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    - {name: Bucket, type: string, jsonPath: .spec.bucket, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: Where a training step's checkpoint lives.
            properties:
              step: {type: integer, description: The training step.}
              bucket: {type: string}
          status:
            type: object
            properties:
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
"""


def test_a_crd_gets_printer_columns_explain_and_validation(env: dict[str, str]) -> None:
    assert "created" in applied(env, CRD)
    eventually(lambda: "checkpoints" in kubectl(env, "api-resources", "--api-group=fidelity.podstart.dev"))
    ckpt = f"apiVersion: fidelity.podstart.dev/v1\nkind: Checkpoint\nmetadata:\n  name: step-100\n  namespace: {NS}\n" \
           "spec:\n  step: 100\n  bucket: s3://ckpt\n"
    assert applied(env, ckpt).strip() == "checkpoint.fidelity.podstart.dev/step-100 created"
    kubectl(env, "patch", "ckpt", "step-100", "-n", NS, "--subresource=status", "--type=merge",
            "-p", '{"status": {"conditions": [{"type": "Ready", "status": "True"}]}}')
    header, rows = table(kubectl(env, "get", "ckpt", "-n", NS))
    assert header == ["NAME", "STEP", "READY", "AGE"] and rows[0][:3] == ["step-100", "100", "True"]
    header, rows = table(kubectl(env, "get", "ckpt", "-n", NS, "-o", "wide"))
    assert header[-1] == "BUCKET" and rows[0][-1] == "s3://ckpt"
    assert "The training step." in kubectl(env, "explain", "checkpoint.spec.step")
    refused = applied(env, ckpt.replace("step: 100", "step: 100\n  shard: 3"), ok=False)
    assert 'unknown field "spec.shard"' in refused


# ------------------------------------------------------------------------------------------------ workloads


def test_deployment_rollout_scale_expose(env: dict[str, str]) -> None:
    assert "deployment.apps/web created" in kubectl(env, "create", "deployment", "web", "-n", NS,
                                                    "--image=nginx:1.27", "--replicas=2", "--port=80")
    assert "successfully rolled out" in kubectl(env, "rollout", "status", "deployment/web", "-n", NS,
                                                "--timeout=60s")
    header, rows = table(kubectl(env, "get", "deploy", "web", "-n", NS))
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] and rows[0][1:4] == ["2/2", "2", "2"]
    assert "deployment.apps/web scaled" in kubectl(env, "scale", "deployment/web", "-n", NS, "--replicas=3")
    assert "image updated" in kubectl(env, "set", "image", "deployment/web", "nginx=nginx:1.28", "-n", NS)
    assert "service/web exposed" in kubectl(env, "expose", "deployment", "web", "-n", NS, "--port=80")
    header, rows = table(kubectl(env, "get", "svc", "web", "-n", NS))
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[0][1] == "ClusterIP" and rows[0][3] == "<none>" and rows[0][4] == "80/TCP"
    # kubectl autoscale creates an autoscaling/v1 HPA; kubectl get reads it as v2 (stored once, converted)
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in kubectl(
        env, "autoscale", "deployment", "web", "-n", NS, "--min=1", "--max=4", "--cpu-percent=70")
    header, rows = table(kubectl(env, "get", "hpa", "web", "-n", NS))
    assert header == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[0][1:5] == ["Deployment/web", "cpu: <unknown>/70%", "1", "4"]
    metrics = json.loads(kubectl(env, "get", "hpa.v2.autoscaling", "web", "-n", NS, "-o", "jsonpath={.spec.metrics}"))
    assert metrics[0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}


def test_a_job_runs_to_completion(env: dict[str, str]) -> None:
    assert "job.batch/hello created" in kubectl(env, "create", "job", "hello", "-n", NS, "--image=busybox:1.36",
                                                "--", "echo", "hi")
    assert "condition met" in kubectl(env, "wait", "--for=condition=complete", "job/hello", "-n", NS,
                                      "--timeout=60s")
    header, rows = table(kubectl(env, "get", "jobs", "-n", NS))
    assert header == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"] and rows[0][1:3] == ["Complete", "1/1"]
    events = kubectl(env, "events", "-n", NS, "--for", "job/hello")
    assert "SuccessfulCreate" in events and "Completed" in events


def test_a_pod_is_scheduled_started_and_measured(env: dict[str, str]) -> None:
    assert "pod/probe created" in kubectl(env, "run", "probe", "-n", NS, "--image=busybox:1.36", "--labels=app=probe",
                                          "--env=MODE=check", "--", "sleep", "3600")
    assert "condition met" in kubectl(env, "wait", "--for=condition=Ready", "pod/probe", "-n", NS, "--timeout=60s")
    header, rows = table(kubectl(env, "get", "pod", "probe", "-n", NS, "-o", "wide"))
    assert header[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and header[6] == "NODE"
    assert rows[0][1:4] == ["1/1", "Running", "0"] and rows[0][6].startswith("hyperpod-i-")
    pod = json.loads(kubectl(env, "get", "pod", "probe", "-n", NS, "-o", "json"))
    assert pod["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "check"}]
    assert pod["spec"]["containers"][0]["args"] == ["sleep", "3600"]
    described = kubectl(env, "describe", "pod", "probe", "-n", NS)
    for reason in ("Scheduled", "Pulling", "Pulled", "Created", "Started"):
        assert reason in described
    header, rows = eventually(lambda: (t := table(kubectl(env, "top", "pods", "-n", NS)))[1] and t)
    assert header == ["NAME", "CPU(cores)", "MEMORY(bytes)"] and "probe" in {r[0] for r in rows}


def test_label_annotate_patch(env: dict[str, str]) -> None:
    assert "labeled" in kubectl(env, "label", "pod", "probe", "-n", NS, "tier=debug")
    assert "annotated" in kubectl(env, "annotate", "pod", "probe", "-n", NS, "owner=ml-team")
    assert "patched" in kubectl(env, "patch", "deployment", "web", "-n", NS, "-p",
                                '{"spec": {"template": {"spec": {"containers": [{"name": "nginx", '
                                '"resources": {"limits": {"cpu": "500m"}}}]}}}}')
    containers = json.loads(kubectl(env, "get", "deploy", "web", "-n", NS, "-o",
                                    "jsonpath={.spec.template.spec.containers}"))
    assert containers[0]["image"] == "nginx:1.28" and containers[0]["resources"]["limits"]["cpu"] == "500m"
    assert kubectl(env, "get", "pods", "-n", NS, "-l", "tier=debug", "-o", "name").strip() == "pod/probe"


def test_cordon_drain_uncordon(env: dict[str, str]) -> None:
    node = kubectl(env, "get", "pod", "probe", "-n", NS, "-o", "jsonpath={.spec.nodeName}")
    assert f"node/{node} cordoned" in kubectl(env, "cordon", node)
    assert table(kubectl(env, "get", "node", node))[1][0][1] == "Ready,SchedulingDisabled"
    drained = kubectl(env, "drain", node, "--ignore-daemonsets", "--force", "--delete-emptydir-data",
                      "--timeout=60s")
    assert f"node/{node} drained" in drained and "evicting pod fidelity/probe" in drained
    assert kubectl(env, "get", "pod", "probe", "-n", NS, ok=False).count("NotFound") == 1
    assert f"node/{node} uncordoned" in kubectl(env, "uncordon", node)


# ------------------------------------------------------------------------------------------------ RBAC


def test_auth_can_i_answers_from_the_clusters_rbac(env: dict[str, str]) -> None:
    assert kubectl(env, "auth", "can-i", "create", "deployments", "-n", NS).strip() == "yes"
    whoami = kubectl(env, "auth", "whoami")
    assert "kubernetes-admin" in whoami and "system:masters" in whoami
    kubectl(env, "create", "role", "pod-reader", "-n", NS, "--verb=get,list,watch", "--resource=pods")
    kubectl(env, "create", "rolebinding", "alice-reads", "-n", NS, "--role=pod-reader", "--user=alice")
    can = kubectl(env, "auth", "can-i", "list", "pods", "-n", NS, "--as=alice", ok=False)
    assert can.strip() == "yes"
    assert kubectl(env, "auth", "can-i", "delete", "pods", "-n", NS, "--as=alice", ok=False).strip() == "no"
    assert kubectl(env, "auth", "can-i", "list", "pods", "-n", "default", "--as=alice", ok=False).strip() == "no"
    refused = kubectl(env, "get", "pods", "-n", "default", "--as=alice", ok=False)
    assert 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace ' \
           '"default"' in refused
    allowed = run(env, str(KUBECTL), "get", "pods", "-n", NS, "--as=alice")  # no pod left after the drain
    assert allowed.stderr.strip() == f"No resources found in {NS} namespace."
    listed = kubectl(env, "auth", "can-i", "--list", "-n", NS, "--as=alice")
    assert any(r.split()[:1] == ["pods"] and "[get list watch]" in r for r in listed.splitlines())


def test_delete_the_namespace(env: dict[str, str]) -> None:
    assert f'namespace "{NS}" deleted' in kubectl(env, "delete", "namespace", NS)
    assert "NotFound" in kubectl(env, "get", "namespace", NS, ok=False)


# ------------------------------------------------------------------------------------------------ aws


Check = Callable[[Any], bool]
AWS_READS: list[tuple[str, list[str], Check]] = [
    ("sts get-caller-identity", ["sts", "get-caller-identity"], lambda d: d["Account"] == "123456789012"),
    ("sagemaker list-clusters", ["sagemaker", "list-clusters"],
     lambda d: any(c["ClusterStatus"] == "InService" for c in d["ClusterSummaries"])),
    ("sagemaker describe-cluster", ["sagemaker", "describe-cluster", "--cluster-name", "{cluster}"],
     lambda d: d["ClusterStatus"] == "InService" and d["NodeRecovery"] == "Automatic"
     and {g["InstanceGroupName"] for g in d["InstanceGroups"]} == {"gpu", "cpu"}),
    ("sagemaker list-cluster-nodes", ["sagemaker", "list-cluster-nodes", "--cluster-name", "{cluster}"],
     lambda d: len(d["ClusterNodeSummaries"]) == 3
     and all(n["InstanceStatus"]["Status"] == "Running" for n in d["ClusterNodeSummaries"])),
    ("sagemaker list-cluster-events", ["sagemaker", "list-cluster-events", "--cluster-name", "{cluster}"],
     lambda d: len(d["Events"]) > 0),
    ("sagemaker list-training-plans", ["sagemaker", "list-training-plans"],
     lambda d: "p5-4x-usw2" in {p["TrainingPlanName"] for p in d["TrainingPlanSummaries"]}),
    ("sagemaker describe-training-plan", ["sagemaker", "describe-training-plan", "--training-plan-name",
                                          "p5-4x-usw2"], lambda d: d["Status"] == "Active"),
    ("sagemaker search-training-plan-offerings",
     ["sagemaker", "search-training-plan-offerings", "--instance-type", "ml.p5.48xlarge", "--instance-count", "2",
      "--duration-hours", "48", "--target-resources", "hyperpod-cluster"],
     lambda d: d["TrainingPlanOfferings"] and all(
         o["DurationHours"] == 48 and o["ReservedCapacityOfferings"][0]["InstanceCount"] == 2
         for o in d["TrainingPlanOfferings"])),
    ("sagemaker list-compute-quotas", ["sagemaker", "list-compute-quotas"],
     lambda d: d["ComputeQuotaSummaries"] == []),
    ("sagemaker list-cluster-scheduler-configs", ["sagemaker", "list-cluster-scheduler-configs"],
     lambda d: d["ClusterSchedulerConfigSummaries"] == []),
    ("eks describe-cluster", ["eks", "describe-cluster", "--name", "{cluster}"],
     lambda d: d["cluster"]["status"] == "ACTIVE" and d["cluster"]["endpoint"].startswith("http://127.0.0.1:")),
    ("eks list-addons", ["eks", "list-addons", "--cluster-name", "{cluster}"],
     lambda d: "metrics-server" in d["addons"]),
    ("eks describe-addon", ["eks", "describe-addon", "--cluster-name", "{cluster}", "--addon-name", "metrics-server"],
     lambda d: d["addon"]["status"] == "ACTIVE"),
    ("eks list-access-entries", ["eks", "list-access-entries", "--cluster-name", "{cluster}"],
     lambda d: any(e.endswith("role/podstart-api") for e in d["accessEntries"])),
    ("eks list-pod-identity-associations", ["eks", "list-pod-identity-associations", "--cluster-name", "{cluster}"],
     lambda d: isinstance(d["associations"], list)),
    ("eks get-token", ["eks", "get-token", "--cluster-name", "{cluster}"],
     lambda d: d["kind"] == "ExecCredential" and d["status"]["token"].startswith("k8s-aws-v1.")),
    ("ec2 describe-vpcs", ["ec2", "describe-vpcs", "--filters", "Name=tag:podstart:cluster,Values={cluster}"],
     lambda d: len(d["Vpcs"]) == 1),
    ("ec2 describe-subnets", ["ec2", "describe-subnets"], lambda d: len(d["Subnets"]) >= 2),
    ("ec2 describe-security-groups", ["ec2", "describe-security-groups"], lambda d: len(d["SecurityGroups"]) >= 1),
    ("ec2 describe-nat-gateways", ["ec2", "describe-nat-gateways"], lambda d: len(d["NatGateways"]) >= 1),
    ("ec2 describe-availability-zones", ["ec2", "describe-availability-zones"],
     lambda d: "usw2-az1" in {z["ZoneId"] for z in d["AvailabilityZones"]}),
    ("iam list-roles", ["iam", "list-roles", "--path-prefix", "/podstart/"],
     lambda d: any("{cluster}" in r["RoleName"] for r in d["Roles"])),
    ("s3 ls", ["s3", "ls"], lambda d: "podstart-data-123456789012" in d),
    ("s3api get-bucket-encryption", ["s3api", "get-bucket-encryption", "--bucket", "podstart-data-123456789012"],
     lambda d: d["ServerSideEncryptionConfiguration"]["Rules"][0]["ApplyServerSideEncryptionByDefault"][
         "SSEAlgorithm"] == "AES256"),
    ("fsx describe-file-systems", ["fsx", "describe-file-systems"], lambda d: isinstance(d["FileSystems"], list)),
    ("fsx describe-data-repository-associations", ["fsx", "describe-data-repository-associations"],
     lambda d: d["Associations"] == []),
    ("service-quotas list-service-quotas", ["service-quotas", "list-service-quotas", "--service-code", "sagemaker"],
     lambda d: any("ml.p5.48xlarge" in q["QuotaName"] for q in d["Quotas"])),
    ("stepfunctions list-state-machines", ["stepfunctions", "list-state-machines"],
     lambda d: any(m["name"] == "podstart-cluster-create" for m in d["stateMachines"])),
    ("stepfunctions list-executions", ["stepfunctions", "list-executions", "--state-machine-arn",
                                       "arn:aws:states:us-west-2:123456789012:stateMachine:podstart-cluster-create"],
     lambda d: any(e["status"] == "SUCCEEDED" for e in d["executions"])),
]


@pytest.fixture(scope="module")
def aws_answers(env: dict[str, str], cluster: str) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every read below through the aws CLI's own driver, in one process (tests/cli_batch.py): each `aws` start
    costs most of a second, thirty of them half a minute."""
    commands = [[a.replace("{cluster}", cluster) for a in args] + ([] if args[:2] == ["s3", "ls"] else
                                                                     ["--output", "json"]) for _, args, _ in AWS_READS]
    python = Path(str(AWS)).parent / "python"
    if not python.exists():  # an aws CLI from PATH, not make cli's: one process per command
        return {name: run(env, str(AWS), *cmd, ok=False) for (name, _, _), cmd in zip(AWS_READS, commands,
                                                                                         strict=True)}
    done = run(env, str(python), str(Path(cli_tools.__file__).with_name("cli_batch.py")),
               stdin=json.dumps(commands))
    answers = json.loads(done.stdout)
    return {name: subprocess.CompletedProcess(cmd, a["rc"], a["stdout"], a["stderr"])
            for (name, _, _), cmd, a in zip(AWS_READS, commands, answers, strict=True)}


@pytest.mark.parametrize("name", [name for name, _, _ in AWS_READS])
def test_aws_reads_answer_like_the_service(name: str, aws_answers: dict[str, Any], cluster: str) -> None:
    done = aws_answers[name]
    assert done.returncode == 0, f"aws {name}: {done.stderr}"
    check = next(c for n, _, c in AWS_READS if n == name)
    data = done.stdout if name == "s3 ls" else json.loads(done.stdout)
    if name == "iam list-roles":
        assert any(cluster in r["RoleName"] for r in data["Roles"])
    else:
        assert check(data), done.stdout[:2000]
