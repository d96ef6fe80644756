"""FSx extension: file systems with a lifecycle (moto 5.2 has none).

CreateFileSystem answers CREATING and the file system becomes AVAILABLE after the time FSx takes
(PERSISTENT_2 Lustre ~12 min), divided by the time scale; DescribeFileSystems returns Lifecycle,
CreationTime, OwnerId, VpcId, DNSName, LustreConfiguration.MountName and tags (and FailureDetails
when FAILED); DeleteFileSystem moves it to DELETING and it is gone a few minutes later. The same
ClientRequestToken returns the same file system, as FSx does; an unknown id is FileSystemNotFound.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, ResourceMissing, now

# Realistic creation times by Lustre deployment type (AWS seconds); other types use the default.
CREATE_S: dict[str, float] = {"PERSISTENT_2": 720.0, "PERSISTENT_1": 720.0, "SCRATCH_2": 420.0, "SCRATCH_1": 420.0}
DEFAULT_CREATE_S = 720.0
DELETE_S = 300.0
FAIL_AT = 0.5  # an armed creation failure happens this far into the creation time


def _mount_name() -> str:
    """An 8-character mount name, as FSx gives PERSISTENT and SCRATCH_2 file systems."""
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(8))


def _vpc_of(region: str, subnet_ids: list[str]) -> str | None:
    from moto.ec2.models import ec2_backends

    backend = ec2_backends[ACCOUNT_ID][region]
    for subnet_id in subnet_ids or []:
        try:
            return str(backend.get_subnet(subnet_id).vpc_id)
        except Exception:
            continue
    return None


def _lustre_details(requested: dict[str, Any] | None) -> dict[str, Any]:
    config = dict(requested or {})
    deployment = config.setdefault("DeploymentType", "SCRATCH_1")
    config["MountName"] = "fsx" if deployment == "SCRATCH_1" else _mount_name()
    config.setdefault("WeeklyMaintenanceStartTime", "1:05:00")
    config.setdefault("DataCompressionType", "NONE")
    config.setdefault("LogConfiguration", {"Level": "DISABLED"})
    if deployment.startswith("PERSISTENT"):
        config.setdefault("CopyTagsToBackups", False)
        config.setdefault("AutomaticBackupRetentionDays", 0)
    return config


def fail_file_system(region: str, file_system_id: str, message: str) -> None:
    """Put a file system into FAILED with FailureDetails.Message (a test/sandbox control)."""
    with RUNTIME.lock:
        fs = _backend(region).file_systems.get(file_system_id)
        if fs is None:
            raise ResourceMissing(f"FSx file system {file_system_id} does not exist in {region}")
        fs.lifecycle = "FAILED"
        fs.failure_message = message


def _backend(region: str) -> Any:
    from moto.fsx.models import fsx_backends

    return fsx_backends[ACCOUNT_ID][region]


def patch() -> None:
    if getattr(patch, "done", False):
        return
    from moto.fsx.exceptions import FileSystemNotFound
    from moto.fsx.models import FileSystem, FSxBackend

    original_create = FSxBackend.create_file_system
    original_describe = FSxBackend.describe_file_systems
    original_to_dict = FileSystem.to_dict

    def create_file_system(self: Any, client_request_token: str | None, *args: Any, **kwargs: Any) -> Any:
        with RUNTIME.lock:
            tokens: dict[str, str] = self.__dict__.setdefault("podstart_tokens", {})
            known = self.file_systems.get(tokens.get(client_request_token or "", ""))
            if known is not None:
                return known
            fs: Any = original_create(self, client_request_token or "", *args, **kwargs)
            fs.lifecycle = "CREATING"
            fs.failure_message = ""
            fs.creation_time = now()
            fs.vpc_id = _vpc_of(self.region_name, fs.subnet_ids)
            if fs.file_system_type == "LUSTRE":
                fs.lustre_configuration = _lustre_details(fs.lustre_configuration)
            if client_request_token:
                tokens[client_request_token] = fs.file_system_id
            deployment = (fs.lustre_configuration or {}).get("DeploymentType", "")

        def available() -> None:
            if self.file_systems.get(fs.file_system_id) is fs and fs.lifecycle == "CREATING":
                fs.lifecycle = "AVAILABLE"

        create_s = CREATE_S.get(deployment, DEFAULT_CREATE_S)
        armed = RUNTIME.take_armed("fsx", "file_system", self.region_name, "next_create")
        if armed is not None:

            def failed(message: str = armed.reason) -> None:
                if self.file_systems.get(fs.file_system_id) is fs and fs.lifecycle == "CREATING":
                    fs.lifecycle, fs.failure_message = "FAILED", message

            RUNTIME.after(create_s * FAIL_AT, failed)
        RUNTIME.after(create_s, available)
        return fs

    def describe_file_systems(self: Any, file_system_ids: list[str] | None = None, **kwargs: Any) -> Any:
        with RUNTIME.lock:
            for fs_id in file_system_ids or []:
                if fs_id not in self.file_systems:
                    raise FileSystemNotFound(fs_id)
            return original_describe(self, file_system_ids=file_system_ids, **kwargs)

    def delete_file_system(self: Any, file_system_id: str, *args: Any, **kwargs: Any) -> Any:
        with RUNTIME.lock:
            fs = self.file_systems.get(file_system_id)
            if fs is None:
                raise FileSystemNotFound(file_system_id)
            fs.lifecycle = "DELETING"
            final: dict[str, Any] = {}

        def gone() -> None:
            if self.file_systems.get(file_system_id) is fs:
                del self.file_systems[file_system_id]

        RUNTIME.after(DELETE_S, gone)
        kind = fs.file_system_type
        return (
            file_system_id,
            "DELETING",
            final if kind == "WINDOWS" else None,
            final if kind == "LUSTRE" else None,
            final if kind == "OPENZFS" else None,
        )

    def to_dict(self: Any) -> dict[str, Any]:
        out = dict(original_to_dict(self))
        out["OwnerId"] = ACCOUNT_ID
        out["Lifecycle"] = getattr(self, "lifecycle", "AVAILABLE")
        if getattr(self, "creation_time", None) is not None:
            out["CreationTime"] = self.creation_time.timestamp()
        if getattr(self, "vpc_id", None):
            out["VpcId"] = self.vpc_id
        if out["Lifecycle"] == "FAILED" and getattr(self, "failure_message", ""):
            out["FailureDetails"] = {"Message": self.failure_message}
        out.setdefault("Tags", [])
        return out

    FSxBackend.create_file_system = create_file_system  # type: ignore[method-assign]
    FSxBackend.describe_file_systems = describe_file_systems  # type: ignore[assignment]
    FSxBackend.delete_file_system = delete_file_system  # type: ignore[method-assign,assignment]
    FileSystem.to_dict = to_dict  # type: ignore[method-assign]
    patch.done = True  # type: ignore[attr-defined]
