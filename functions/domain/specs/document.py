"""Spec documents (`apiVersion: podstart/v1`): the REST request models in a document shape, and the pure parts
of planning them against the live state.

A document is `{apiVersion, kind, metadata, spec}`. Its `spec` IS the body a REST route validates, with the
name (and the cluster, region, namespace) moved to `metadata`:

- `Cluster`: POST /v1/clusters (`ClusterCreate`), plus `features` (the PATCH .../features document,
  `FeaturesPatch`) and `volumes` (POST .../storage bodies, `StorageAdd`);
- `TrainingJob`: POST .../jobs (`JobSubmit`); secrets by name only, as the route takes them;
- `Endpoint`: POST .../endpoints (`EndpointCreate`).

The spec models subclass the request models, so every field rule and validator is the route's own; the only
rule added here is that a name given inside `spec` belongs in `metadata`. `GET /v1/specs/schema` publishes
them as JSON Schema for editors.

A plan lists, per document, `create`, `update` (field by field, old -> new), `unchanged`, `replace-needed`
(a field no operation can change was changed) or, for what the documents no longer name, `delete` (only
applied with `prune: true`), plus the dry-run plans of the child operations an apply would start, by phase:
cluster, then instance groups, storage, features, then jobs and endpoints, then the pruning.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from functions.domain.clusters.api import ClusterCreate, GroupName
from functions.domain.features.api import FeaturesPatch
from functions.domain.inference.api import EndpointCreate, EndpointName
from functions.domain.plans import Cost, Plan
from functions.domain.preferences import ClusterName, RegionName
from functions.domain.storage.api import StorageAdd
from functions.domain.training.api import NAME as JOB_NAME
from functions.domain.training.api import NAMESPACE, JobSubmit

API_VERSION = "podstart/v1"
DOCUMENT_KINDS = ("Cluster", "TrainingJob", "Endpoint")
# spec.apply's steps, in the order an apply runs them; an operation lists only those it needs.
PHASES = ("cluster", "instance_groups", "storage", "features", "jobs", "endpoints", "prune")
MAX_DOCUMENTS = 100


def _no_name_in_spec(data: Any, moved: tuple[str, ...]) -> Any:
    if isinstance(data, dict):
        for key in moved:
            if key in data:
                raise ValueError(f"{key} goes in metadata, not in spec")
    return data


class ClusterSpec(ClusterCreate):
    """A Cluster document's spec: POST /v1/clusters's body (name and region are in metadata), the features
    document and the volumes added after create."""

    name: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # type: ignore[assignment]
    region: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # type: ignore[assignment]
    features: FeaturesPatch | None = Field(
        default=None, description="Managed features, as PATCH .../features takes them: a feature left out is "
                                  "never touched")
    volumes: list[StorageAdd] = Field(
        default_factory=list, max_length=50,
        description="Volumes added after create (POST .../storage): S3 buckets or prefixes, FSx for Lustre")

    @model_validator(mode="before")
    @classmethod
    def _metadata_names(cls, data: Any) -> Any:
        return _no_name_in_spec(data, ("name", "region"))

    def create_body(self, name: str, region: str) -> ClusterCreate:
        """The POST /v1/clusters body this spec makes (validated again by the route's own model)."""
        body = self.model_dump(mode="json", exclude={"features", "volumes"}, exclude_none=True)
        return ClusterCreate.model_validate({**body, "name": name, "region": region})


class TrainingJobSpec(JobSubmit):
    """A TrainingJob document's spec: POST .../jobs's body (name and namespace are in metadata)."""

    name: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # type: ignore[assignment]
    namespace: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _metadata_names(cls, data: Any) -> Any:
        return _no_name_in_spec(data, ("name", "namespace"))

    def submit_body(self, name: str, namespace: str) -> JobSubmit:
        body = self.model_dump(mode="json", exclude_none=True)
        return JobSubmit.model_validate({**body, "name": name, "namespace": namespace})


class EndpointSpec(EndpointCreate):
    """An Endpoint document's spec: POST .../endpoints's body (the name is in metadata)."""

    name: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _metadata_names(cls, data: Any) -> Any:
        return _no_name_in_spec(data, ("name",))

    def deploy_body(self, name: str) -> EndpointCreate:
        body = self.model_dump(mode="json", exclude_none=True)
        return EndpointCreate.model_validate({**body, "name": name})


class ClusterMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClusterName
    region: RegionName


class _WorkloadMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster: ClusterName = Field(description="The cluster it runs on")
    region: RegionName | None = Field(default=None, description="The cluster's region, if its name is ambiguous")


class TrainingJobMetadata(_WorkloadMetadata):
    name: str = Field(pattern=JOB_NAME, description="Job name")
    namespace: str = Field(default="default", pattern=NAMESPACE, description="Kubernetes namespace")


class EndpointMetadata(_WorkloadMetadata):
    name: EndpointName


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apiVersion: Literal["podstart/v1"] = Field(description="podstart/v1")  # the document's own key


class ClusterDocument(_Document):
    kind: Literal["Cluster"]
    metadata: ClusterMetadata
    spec: ClusterSpec


class TrainingJobDocument(_Document):
    kind: Literal["TrainingJob"]
    metadata: TrainingJobMetadata
    spec: TrainingJobSpec


class EndpointDocument(_Document):
    kind: Literal["Endpoint"]
    metadata: EndpointMetadata
    spec: EndpointSpec


AnyDocument = ClusterDocument | TrainingJobDocument | EndpointDocument
Document = Annotated[AnyDocument, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[AnyDocument] = TypeAdapter(Document)


def parse_documents(raw: list[Any]) -> tuple[list[AnyDocument], list[dict[str, Any]]]:
    """Each document validated by its kind's models; errors located as ["body", "documents", i, ...path]."""
    docs: list[AnyDocument] = []
    errors: list[dict[str, Any]] = []
    for i, item in enumerate(raw):
        try:
            docs.append(_ADAPTER.validate_python(item))
        except ValidationError as exc:
            kind = item.get("kind") if isinstance(item, dict) else None
            for e in exc.errors(include_url=False):
                loc = list(e["loc"])
                if loc[:1] == [kind]:
                    loc = loc[1:]  # the union's tag: the document's own kind
                if e["type"] in ("union_tag_invalid", "union_tag_not_found"):
                    loc, msg = ["kind"], f"kind is one of {', '.join(DOCUMENT_KINDS)}"
                else:
                    msg = e["msg"].removeprefix("Value error, ")
                errors.append({"loc": ["body", "documents", i, *loc], "msg": msg})
    return docs, errors


def target_of(doc: AnyDocument) -> tuple[str, str | None]:
    """(cluster, region or None) a document belongs to."""
    if isinstance(doc, ClusterDocument):
        return doc.metadata.name, doc.metadata.region
    return doc.metadata.cluster, doc.metadata.region


@lru_cache(maxsize=1)
def json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of one spec document, from the same models the routes validate with."""
    schema = _ADAPTER.json_schema(mode="validation", ref_template="#/$defs/{model}")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://podstart.dev/specs/v1",
              "title": "PodStart spec document (apiVersion podstart/v1)",
              "description": "One document of a spec file; a file holds one or many (YAML `---`). The spec of "
                             "each kind is the body its REST route takes; the name is in metadata.",
              **schema}
    return schema


# -- plans ------------------------------------------------------------------------------------------------
Change = Literal["create", "update", "delete", "replace-needed"]
DocumentAction = Literal["create", "update", "unchanged", "replace-needed", "delete"]


class FieldDiff(BaseModel):
    """One field of a document: what the live state has and what the document says."""

    path: str = Field(description="The field, with list items named: spec.instance_groups[gpu].instance_count")
    loc: list[str | int] | None = Field(default=None, description="Where in the document (indices), when it "
                                                                  "is there: [spec, instance_groups, 0, ...]")
    old: Any = Field(default=None, description="Live value (null: none)")
    new: Any = Field(default=None, description="The document's value (null: none)")
    change: Change
    note: str | None = None


class ChildOperation(BaseModel):
    """An operation an apply would start, with its dry-run plan when the live state allows one now."""

    phase: str
    kind: str
    resource: str
    plan: Plan | None = None
    note: str | None = Field(default=None, description="Why there is no plan yet, or what the plan assumed")


class DocumentPlan(BaseModel):
    index: int | None = Field(description="The document's position in the request (null: not in the documents)")
    kind: str
    name: str
    namespace: str | None = None
    action: DocumentAction
    diffs: list[FieldDiff] = Field(default_factory=list)
    operations: list[ChildOperation] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class SpecPlan(BaseModel):
    """POST /v1/specs/plan: the documents diffed against the live state; nothing is changed."""

    changed: bool = Field(description="false: the live state already is what the documents say")
    cluster: str
    region: str
    prune: bool
    documents: list[DocumentPlan]
    summary: dict[str, int] = Field(description="Documents (and pruned resources) per action")
    cost: Cost = Field(description="The hourly cost delta of the child operations that have a plan now")
    warnings: list[str] = Field(default_factory=list)

    @property
    def replace_needed(self) -> list[tuple[DocumentPlan, FieldDiff]]:
        return [(d, f) for d in self.documents for f in d.diffs if f.change == "replace-needed"]


class SpecUnchanged(BaseModel):
    """POST /v1/specs/apply when nothing differs: no operation starts."""

    changed: Literal[False] = False
    plan: SpecPlan


class SpecRequest(BaseModel):
    """POST /v1/specs/plan and /v1/specs/apply."""

    model_config = ConfigDict(extra="forbid")

    documents: list[dict[str, Any]] = Field(
        min_length=1, max_length=MAX_DOCUMENTS,
        description="Spec documents for ONE cluster: {apiVersion: podstart/v1, kind: Cluster|TrainingJob|Endpoint, "
                    "metadata, spec}; schema: GET /v1/specs/schema")
    prune: bool = Field(default=False, description=(
        "Also delete what the cluster has and the documents no longer name: instance groups and volumes of the "
        "Cluster document, and jobs or endpoints when the documents include that kind. Each deletion needs its "
        "own role (a group: admin)"))


class SpecExport(BaseModel):
    """GET /v1/clusters/{cluster}/spec: the live cluster as spec documents (defaults explicit, nothing secret)."""

    documents: list[dict[str, Any]]


class ChildAction(BaseModel):
    """One child operation of spec.apply, as its step starts it: the use case's arguments, JSON."""

    model_config = ConfigDict(frozen=True)

    phase: str
    kind: str
    resource: str
    document: int | None = None
    args: dict[str, Any] = Field(default_factory=dict)


def zero_cost() -> Cost:
    return Cost(hourly=0.0, monthly_estimate=0.0)


GROUP_IMMUTABLE = ("instance_type", "availability_zone", "capacity_type", "training_plan_arn", "efa_only",
                   "volume_size_gb", "deep_health_checks")
GroupNameT = GroupName  # re-exported for the logic layer's signatures
