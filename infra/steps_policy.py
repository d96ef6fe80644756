"""What the `steps` function may do: the calls the cluster workflows make, and no more.

Every action here is one ``functions/`` calls (``tests/infra/test_iam_actions_used.py`` keeps it so).
Clusters live in any region of the account (the request names it), so cluster-scoped ARNs carry a
region wildcard and the account; names are chosen by users, so they carry a name wildcard.

* EC2 networking: created only with the tag ``podstart:managed=true`` (tag-on-create), changed and
  deleted only when it carries that tag; Describe* calls are read-only and account-wide.
* IAM: roles named ``podstart-*`` or under ``/podstart/``, created and changed only with the
  PodStart permissions boundary (:mod:`infra.boundary`) on them; nothing may remove or change the
  boundary (explicit Deny). PassRole only to SageMaker, EKS and EKS Pod Identity.
* Destroying and access-granting actions need the resource tag ``podstart:managed``: ``true`` for
  what PodStart created, ``true`` or ``imported`` for the access entry on an imported cluster.
  Every one of them supports ``aws:ResourceTag`` (service authorization reference): SageMaker
  ``cluster`` actions; EKS ``DeleteCluster``/``CreateAccessEntry``/``CreateAddon``/
  ``CreatePodIdentityAssociation`` on the cluster's tags; EKS ``AssociateAccessPolicy``/
  ``DeleteAccessEntry`` on the *access entry's* own tags (so PodStart tags its access entries);
  EKS ``DeleteAddon`` on the add-on's; FSx ``DeleteFileSystem`` on the file system's.
* Tagging: EKS ``CreateCluster`` has no resource-level permissions and authorizes its tags as the
  dependent ``eks:TagResource``; IAM has no EKS/SageMaker "create action" key to tell tagging at
  creation from a later TagResource/AddTags. So tagging is limited to PodStart's two tag keys and
  the two values; a later ``TagResource`` could still mark an existing cluster ``true`` — which a
  PodStart bug cannot do by accident (no code path tags an existing cluster ``true``), and which
  the delete workflows check again in code.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

from infra.data import DataConstruct
from infra.nag import acknowledge_wildcards, grant

MANAGED_TAG = "podstart:managed"
CLUSTER_TAG = "podstart:cluster"
OPERATION_TAG = "podstart:operation"  # a training plan's: the operation that bought it
MANAGED = "true"
IMPORTED = "imported"
_P, _A = cdk.Aws.PARTITION, cdk.Aws.ACCOUNT_ID

_EC2_DESCRIBE = [
    "ec2:DescribeAddresses",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInternetGateways",
    "ec2:DescribeNatGateways",
    "ec2:DescribeRouteTables",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVpcEndpoints",
    "ec2:DescribeVpcs",
]
EC2_CREATE = [
    "ec2:CreateVpc",
    "ec2:CreateSubnet",
    "ec2:CreateRouteTable",
    "ec2:CreateInternetGateway",
    "ec2:CreateNatGateway",
    "ec2:AllocateAddress",
    "ec2:CreateSecurityGroup",
    "ec2:CreateVpcEndpoint",
]
_EC2_MUTATE = [
    "ec2:ModifyVpcAttribute",
    "ec2:ModifySubnetAttribute",
    "ec2:CreateRoute",
    "ec2:AssociateRouteTable",
    "ec2:DisassociateRouteTable",
    "ec2:AttachInternetGateway",
    "ec2:DetachInternetGateway",
    "ec2:AuthorizeSecurityGroupIngress",
    "ec2:AuthorizeSecurityGroupEgress",
    "ec2:DeleteVpc",
    "ec2:DeleteSubnet",
    "ec2:DeleteRouteTable",
    "ec2:DeleteInternetGateway",
    "ec2:DeleteNatGateway",
    "ec2:ReleaseAddress",
    "ec2:DeleteSecurityGroup",
    "ec2:DeleteVpcEndpoints",
]
# The AWS managed policies the code attaches to the roles it creates (functions/domain/iam.py).
ATTACHABLE_POLICIES = ["AmazonEKSClusterPolicy", "AmazonSageMakerClusterInstanceRolePolicy"]
CLUSTER_ADMIN_ACCESS_POLICY = "AmazonEKSClusterAdminPolicy"
_PASSABLE_TO = ["sagemaker.amazonaws.com", "eks.amazonaws.com", "pods.eks.amazonaws.com"]
_SERVICE_LINKED = [
    "eks.amazonaws.com",
    "sagemaker.amazonaws.com",
    "fsx.amazonaws.com",
    "s3.data-source.lustre.fsx.amazonaws.com",
]
Conditions = dict[str, dict[str, Any]]
_TAG_KEYS: Conditions = {"ForAllValues:StringEquals": {"aws:TagKeys": [MANAGED_TAG, CLUSTER_TAG]}}


def _arn(service: str, resource: str) -> str:
    """An ARN of this account in any region (clusters are created where the request says)."""
    return f"arn:{_P}:{service}:*:{_A}:{resource}"


def _podstart_iam(kind: str) -> list[str]:
    return [f"arn:{_P}:iam::{_A}:{kind}/podstart-*", f"arn:{_P}:iam::{_A}:{kind}/podstart/*"]


def _tagged(*values: str) -> Conditions:
    return {"StringEquals": {f"aws:ResourceTag/{MANAGED_TAG}": list(values) if len(values) > 1 else values[0]}}


def _requesting(*values: str) -> Conditions:
    return {"StringEquals": {f"aws:RequestTag/{MANAGED_TAG}": list(values) if len(values) > 1 else values[0]}}


def _all(*conditions: Conditions) -> Conditions:
    """Conditions that must all hold (operators merged key by key)."""
    merged: Conditions = {}
    for condition in conditions:
        for operator, keys in condition.items():
            merged.setdefault(operator, {}).update(keys)
    return merged


def add_steps_permissions(role: iam.Role, *, data: DataConstruct, boundary_arn: str,
                          reader_roles: list[iam.Role] | None = None) -> None:
    _ec2(role)
    _eks(role, reader_roles or [])
    _iam(role, boundary_arn)
    _sagemaker(role)
    _training_plans(role)
    _fsx(role)
    _assets(role, data)


def _ec2(role: iam.Role) -> None:
    ec2_any = _arn("ec2", "*")
    grant(
        role,
        sid="Ec2Describe",
        actions=_EC2_DESCRIBE,
        resources=["*"],
        reason="EC2 Describe* actions are read-only and support no resource-level permissions.",
    )
    grant(
        role,
        sid="Ec2CreateTaggedNetwork",
        actions=EC2_CREATE,
        resources=[ec2_any],
        conditions=_requesting(MANAGED),
        reason="Network resources get their ids at creation; creation requires the podstart:managed tag.",
    )
    grant(
        role,
        sid="Ec2CreateReferencedNetwork",
        actions=[
            "ec2:CreateSubnet",
            "ec2:CreateRouteTable",
            "ec2:CreateSecurityGroup",
            "ec2:CreateVpcEndpoint",
            "ec2:CreateNatGateway",
        ],
        resources=[
            _arn("ec2", "vpc/*"),
            _arn("ec2", "subnet/*"),
            _arn("ec2", "elastic-ip/*"),
            _arn("ec2", "route-table/*"),
            _arn("ec2", "security-group/*"),
        ],
        conditions=_tagged(MANAGED),
        reason="Subnets, route tables, endpoints and NAT are created inside PodStart-managed (tagged) VPCs.",
    )
    grant(
        role,
        sid="Ec2TagOnCreate",
        actions=["ec2:CreateTags"],
        resources=[ec2_any],
        conditions={"StringEquals": {"ec2:CreateAction": EC2_CREATE}},
        reason="Tagging allowed only as part of the PodStart create calls (tag-on-create).",
    )
    grant(
        role,
        sid="Ec2ChangeManagedNetwork",
        actions=_EC2_MUTATE,
        resources=[ec2_any],
        conditions=_tagged(MANAGED),
        reason="Changes and deletes only resources tagged podstart:managed=true; ids are not known ahead.",
    )


def _eks(role: iam.Role, reader_roles: list[iam.Role]) -> None:
    clusters = _arn("eks", "cluster/*")
    access_entries = _arn("eks", "access-entry/*/*/*/*/*")
    addons = _arn("eks", "addon/*/*/*")
    associations = _arn("eks", "podidentityassociation/*/*")
    # PodStart's own entries: the workflows' role (cluster admin) and the readers' (the podstart-api group: the
    # API's and the live socket's functions)
    principals = [role.role_arn] + [r.role_arn for r in reader_roles]
    own_entry: Conditions = {"StringEquals": {"eks:principalArn": principals}}
    why_names = "EKS clusters are named by users, in any region; "
    grant(
        role,
        sid="EksCreateTaggedClusters",
        actions=["eks:CreateCluster"],
        resources=["*"],
        conditions=_requesting(MANAGED),
        reason="eks:CreateCluster supports no resource-level permissions; the request must tag the cluster "
        "podstart:managed=true.",
    )
    grant(
        role,
        sid="EksReadClusters",
        actions=["eks:DescribeCluster", "eks:ListAddons", "eks:ListAccessEntries", "eks:ListPodIdentityAssociations"],
        resources=[clusters],
        reason=why_names + "read-only.",
    )
    grant(
        role,
        sid="EksDeleteManagedClusters",
        actions=["eks:DeleteCluster"],
        resources=[clusters],
        conditions=_tagged(MANAGED),
        reason=why_names + "only clusters tagged podstart:managed=true (created by PodStart).",
    )
    grant(
        role,
        sid="EksExtendManagedClusters",
        actions=["eks:CreateAddon", "eks:CreatePodIdentityAssociation"],
        resources=[clusters],
        conditions=_tagged(MANAGED, IMPORTED),
        reason=why_names + "add-ons and pod identities go only on clusters PodStart created or imported "
        "(cluster.reconcile installs the base dependencies on an imported cluster; storage.add binds a volume's "
        "role to its service account).",
    )
    grant(
        role,
        sid="EksCreateOwnAccessEntry",
        actions=["eks:CreateAccessEntry"],
        resources=[clusters],
        conditions=_all(_tagged(MANAGED, IMPORTED), own_entry),
        reason=why_names + "only PodStart's own roles (workflows, API, live socket) get an access entry, only on "
        "clusters tagged podstart:managed true or imported.",
    )
    grant(
        role,
        sid="EksGrantOwnClusterAdmin",
        actions=["eks:AssociateAccessPolicy"],
        resources=[access_entries],
        conditions={
            "StringEquals": {
                f"aws:ResourceTag/{MANAGED_TAG}": [MANAGED, IMPORTED],
                "eks:principalArn": role.role_arn,
                "eks:policyArn": f"arn:{_P}:eks::aws:cluster-access-policy/{CLUSTER_ADMIN_ACCESS_POLICY}",
            }
        },
        reason=why_names + "cluster admin for PodStart's own access entry only, tagged podstart:managed.",
    )
    grant(
        role,
        sid="EksDeleteOwnAccessEntry",
        actions=["eks:DeleteAccessEntry"],
        resources=[access_entries],
        conditions=_all(_tagged(MANAGED, IMPORTED), own_entry),
        reason=why_names + "PodStart removes only its own (tagged) access entry.",
    )
    grant(
        role,
        sid="EksReadAccessEntries",
        actions=["eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies"],
        resources=[access_entries],
        reason=why_names + "access entry ids are assigned by EKS; read-only.",
    )
    grant(
        role,
        sid="EksAddons",
        actions=["eks:DescribeAddon"],
        resources=[addons],
        reason=why_names + "add-on names are per cluster; read-only.",
    )
    grant(
        role,
        sid="EksDeleteManagedAddons",
        actions=["eks:DeleteAddon", "eks:UpdateAddon"],
        resources=[addons],
        conditions=_tagged(MANAGED),
        reason=why_names + "only add-ons tagged podstart:managed=true (features.update changes and removes "
        "the add-ons it installed).",
    )
    grant(
        role,
        sid="EksPodIdentityAssociations",
        actions=["eks:DeletePodIdentityAssociation", "eks:DescribePodIdentityAssociation",
                 "eks:UpdatePodIdentityAssociation"],
        resources=[associations],
        reason=why_names + "association ids are assigned by EKS; the delete workflow removes those of a "
        "PodStart-managed cluster, a job's mlflow_access step points its ServiceAccount's at the job's role and "
        "job.delete removes it.",
    )
    grant(
        role,
        sid="EksTagClusters",
        actions=["eks:TagResource"],
        resources=[clusters],
        conditions=_all(_requesting(MANAGED, IMPORTED), _TAG_KEYS),
        reason=why_names + "CreateCluster's tags (podstart:managed=true) and the import workflow's "
        "(podstart:managed=imported); PodStart's two tag keys only.",
    )
    grant(
        role,
        sid="EksUntagImported",
        actions=["eks:UntagResource"],
        resources=[clusters],
        conditions=_all(_tagged(IMPORTED), _TAG_KEYS),
        reason=why_names + "deleting an imported cluster from PodStart removes only its adoption tags.",
    )
    grant(
        role,
        sid="EksTagChildrenOnCreate",
        actions=["eks:TagResource"],
        resources=[addons, access_entries, associations],
        conditions=_TAG_KEYS,
        reason=why_names + "tags given to CreateAddon/CreateAccessEntry/CreatePodIdentityAssociation; "
        "PodStart's two tag keys only.",
    )


def _iam(role: iam.Role, boundary_arn: str) -> None:
    roles = _podstart_iam("role")
    bounded: Conditions = {"StringEquals": {"iam:PermissionsBoundary": boundary_arn}}
    why = "Only roles named podstart-* or under /podstart/ (per-cluster roles, names made by PodStart)"
    grant(
        role,
        sid="IamBoundedRoles",
        actions=["iam:CreateRole", "iam:PutRolePolicy", "iam:DeleteRolePolicy", "iam:DetachRolePolicy"],
        resources=roles,
        conditions=bounded,
        reason=why + ", and only while they carry the PodStart permissions boundary.",
    )
    grant(
        role,
        sid="IamAttachAllowListedPolicies",
        actions=["iam:AttachRolePolicy"],
        resources=roles,
        conditions=_all(
            bounded, {"ArnEquals": {"iam:PolicyARN": [f"arn:{_P}:iam::aws:policy/{p}" for p in ATTACHABLE_POLICIES]}}
        ),
        reason=why + ", bounded, and only the AWS managed policies the cluster roles need.",
    )
    grant(
        role,
        sid="IamReadAndDeletePodStartRoles",
        actions=[
            "iam:GetRole",
            "iam:GetRolePolicy",
            "iam:ListRolePolicies",
            "iam:ListAttachedRolePolicies",
            "iam:TagRole",
            "iam:DeleteRole",
        ],
        resources=roles,
        reason=why + ".",
    )
    grant(
        role,
        sid="IamPassPodStartRoles",
        actions=["iam:PassRole"],
        resources=roles,
        conditions={"StringEquals": {"iam:PassedToService": _PASSABLE_TO}},
        reason=why + ", passed only to SageMaker, EKS and EKS Pod Identity.",
    )
    grant(
        role,
        sid="IamEksOidcProviders",
        actions=[
            "iam:CreateOpenIDConnectProvider",
            "iam:DeleteOpenIDConnectProvider",
            "iam:TagOpenIDConnectProvider",
        ],
        resources=[f"arn:{_P}:iam::{_A}:oidc-provider/oidc.eks.*"],
        reason="OIDC providers for EKS cluster issuers only (issuer ids are assigned by EKS).",
    )
    grant(
        role,
        sid="IamListOidcProviders",
        actions=["iam:ListOpenIDConnectProviders"],
        resources=["*"],
        reason="iam:ListOpenIDConnectProviders supports no resource-level permissions (read-only).",
    )
    grant(
        role,
        sid="IamServiceLinkedRoles",
        actions=["iam:CreateServiceLinkedRole"],
        resources=[f"arn:{_P}:iam::{_A}:role/aws-service-role/*"],
        conditions={"StringEquals": {"iam:AWSServiceName": _SERVICE_LINKED}},
        reason="First use of EKS, SageMaker and FSx in an account creates their service-linked roles.",
    )
    # Nothing may take the boundary off a role or rewrite the boundary policy itself.
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="KeepRoleBoundaries",
            effect=iam.Effect.DENY,
            actions=["iam:DeleteRolePermissionsBoundary", "iam:PutRolePermissionsBoundary"],
            resources=["*"],
        )
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="KeepTheBoundaryPolicy",
            effect=iam.Effect.DENY,
            actions=[
                "iam:CreatePolicyVersion",
                "iam:DeletePolicy",
                "iam:DeletePolicyVersion",
                "iam:SetDefaultPolicyVersion",
            ],
            resources=[boundary_arn],
        )
    )
    acknowledge_wildcards(
        role, resources=["*"], reason="Explicit Deny on every role: no role's permissions boundary may be changed."
    )


def _sagemaker(role: iam.Role) -> None:
    grant(
        role,
        sid="MlflowTrackingServerRead",
        actions=["sagemaker:DescribeMlflowTrackingServer"],
        resources=[_arn("sagemaker", "mlflow-tracking-server/*")],
        reason="A job's mlflow_access step checks that the tracking server it names (any of this account's, in the "
        "cluster's region) is still usable before scoping a role to it; read-only.",
    )
    clusters = _arn("sagemaker", "cluster/*")
    why = "HyperPod clusters are named by users, in any region; "
    grant(
        role,
        sid="HyperPodCreateTagged",
        actions=["sagemaker:CreateCluster"],
        resources=[clusters],
        conditions=_requesting(MANAGED),
        reason=why + "created only with the podstart:managed=true tag.",
    )
    grant(
        role,
        sid="HyperPodTag",
        actions=["sagemaker:AddTags"],
        resources=[clusters],
        conditions=_all(_requesting(MANAGED, IMPORTED), _TAG_KEYS),
        reason=why + "CreateCluster's tags are authorized as AddTags, and an import marks the adopted cluster "
        "podstart:managed=imported; PodStart's two tag keys only.",
    )
    grant(
        role,
        sid="HyperPodUntagImported",
        actions=["sagemaker:DeleteTags"],
        resources=[clusters],
        conditions=_all(_tagged(IMPORTED), _TAG_KEYS),
        reason=why + "deleting an imported cluster from PodStart removes only its adoption tags.",
    )
    grant(
        role,
        sid="HyperPodRead",
        actions=["sagemaker:DescribeCluster", "sagemaker:ListTags"],
        resources=[clusters],
        reason=why + "read-only (the delete step reads the podstart:managed tag).",
    )
    grant(
        role,
        sid="HyperPodUpdateTracked",
        actions=["sagemaker:UpdateCluster"],
        resources=[clusters],
        conditions=_tagged(MANAGED, IMPORTED),
        reason=why + "instance groups change only on clusters PodStart created or imported.",
    )
    grant(
        role,
        sid="HyperPodNodeActionsTracked",
        actions=["sagemaker:BatchRebootClusterNodes", "sagemaker:BatchReplaceClusterNodes"],
        resources=[clusters],
        conditions=_tagged(MANAGED, IMPORTED),
        reason=why + "nodes are rebooted or replaced only on clusters PodStart created or imported.",
    )
    grant(
        role,
        sid="HyperPodHealthCheckTracked",
        actions=["sagemaker:StartClusterHealthCheck"],
        resources=[clusters],
        conditions=_tagged(MANAGED, IMPORTED),
        reason=why + "deep health checks run only on clusters PodStart created or imported.",
    )
    grant(
        role,
        sid="HyperPodSoftwareUpdateOwned",
        actions=["sagemaker:UpdateClusterSoftware"],
        resources=[clusters],
        conditions=_tagged(MANAGED),
        reason=why + "platform software (every node restarts) is updated only on clusters PodStart created; an "
        "imported cluster's owners patch it with their own tooling.",
    )
    grant(
        role,
        sid="HyperPodNodeDeleteOwned",
        actions=["sagemaker:BatchDeleteClusterNodes"],
        resources=[clusters],
        conditions=_tagged(MANAGED),
        reason=why + "nodes are deleted (terminated, the group shrinks) only on clusters PodStart created; "
        "an imported cluster's instances are never deleted.",
    )
    grant(
        role,
        sid="HyperPodNodeRead",
        actions=["sagemaker:ListClusterNodes", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterEvents"],
        resources=[clusters],
        reason=why + "node operations watch their nodes (a deep health check's verdicts are cluster events); "
        "read-only.",
    )
    grant(
        role,
        sid="HyperPodDeleteManaged",
        actions=["sagemaker:DeleteCluster"],
        resources=[clusters],
        conditions=_tagged(MANAGED),
        reason=why + "deletes only clusters it created (podstart:managed=true), never imported ones.",
    )
    grant(
        role,
        sid="HyperPodTrainingPlans",
        actions=["sagemaker:CreateCluster", "sagemaker:UpdateCluster"],
        resources=[_arn("sagemaker", "training-plan/*")],
        reason="An instance group may run on any of the account's training plans: CreateCluster/UpdateCluster are "
        "authorized against the plan as well as the (tag-conditioned) cluster, which stays required.",
    )
    grant(
        role,
        sid="HyperPodList",
        actions=["sagemaker:ListClusters"],
        resources=["*"],
        reason="sagemaker:ListClusters supports no resource-level permissions.",
    )


def _training_plans(role: iam.Role) -> None:
    """training_plan.purchase: buy one plan (tagged podstart:managed=true and with the operation's id), read it."""
    plans = _arn("sagemaker", "training-plan/*")
    why = "Training plans are named by the admin who buys them, in any region; "
    grant(
        role,
        sid="TrainingPlanBuyTagged",
        actions=["sagemaker:CreateTrainingPlan"],
        resources=[plans],
        conditions=_requesting(MANAGED),
        reason=why + "bought only with the podstart:managed=true tag (an admin's operation, its fee confirmed).",
    )
    grant(
        role,
        sid="TrainingPlanTag",
        actions=["sagemaker:AddTags"],
        resources=[plans],
        conditions=_all(_requesting(MANAGED),
                        {"ForAllValues:StringEquals": {"aws:TagKeys": [MANAGED_TAG, OPERATION_TAG]}}),
        reason=why + "CreateTrainingPlan's tags are authorized as AddTags: PodStart's managed tag and the "
        "operation id (a retry adopts only the plan its own operation bought).",
    )
    grant(
        role,
        sid="TrainingPlanRead",
        actions=["sagemaker:DescribeTrainingPlan", "sagemaker:ListTags"],
        resources=[plans],
        reason=why + "read-only: the purchase watches its plan until Scheduled or Active.",
    )


def _fsx(role: iam.Role) -> None:
    file_systems = _arn("fsx", "file-system/*")
    grant(
        role,
        sid="FsxCreateTagged",
        actions=["fsx:CreateFileSystem", "fsx:TagResource"],
        resources=[file_systems],
        conditions=_requesting(MANAGED),
        reason="FSx for Lustre shared storage (ids assigned by FSx), created only with the podstart:managed tag.",
    )
    grant(
        role,
        sid="FsxDeleteTagged",
        actions=["fsx:DeleteFileSystem"],
        resources=[file_systems],
        conditions=_tagged(MANAGED),
        reason="Deletes only file systems tagged podstart:managed=true.",
    )
    grant(
        role,
        sid="FsxDescribe",
        actions=["fsx:DescribeFileSystems"],
        resources=["*"],
        reason="fsx:DescribeFileSystems without ids lists the account's file systems (read-only).",
    )


def _assets(role: iam.Role, data: DataConstruct) -> None:
    assets = data.assets_bucket
    grant(
        role,
        sid="LifecycleScripts",
        actions=["s3:GetObject", "s3:PutObject"],
        resources=[assets.arn_for_objects("lifecycle/*")],
        reason="HyperPod lifecycle scripts, uploaded once per content hash under lifecycle/ of the assets bucket.",
    )
    grant(
        role,
        sid="LifecycleScriptsBucket",
        actions=["s3:ListBucket"],
        resources=[assets.bucket_arn],
        reason="HeadObject on a not-yet-uploaded script answers 404 instead of 403 (assets bucket only).",
    )
    grant(
        role,
        sid="CountDownloadedModels",
        actions=["s3:ListBucket"],
        resources=[data.data_bucket.bucket_arn],
        conditions={"StringLike": {"s3:prefix": ["models/*"]}},
        reason="model.download counts the files and the _COMPLETE marker under models/{model}/{revision}/ (pods "
        "see /data/models/...); the Job itself writes them, with its own Pod Identity role; models prefix, read-only.",
    )
    grant(
        role,
        sid="ReadDownloadManifests",
        actions=["s3:GetObject"],
        resources=[data.data_bucket.arn_for_objects("models/*/_podstart_manifest.json")],
        reason="model.download reads its progress from the download script's manifest object; manifests only, "
        "read-only.",
    )
